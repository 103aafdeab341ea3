"""vacc.__version__ and vacc.Config against the command (`vacc --version`, `vacc config check`)."""

import pytest
import yaml

import vacc
from conftest import SRC, cli, cli_error


def test_version_matches_the_command():
    _, out, _ = cli("--version")
    assert out.strip() == "vacc " + vacc.__version__


def test_bundled_name_and_path_load_the_same_config():
    by_name = vacc.Config("small")
    by_path = vacc.Config(SRC + "/configs/small.yaml")
    assert by_name.name == by_path.name == "small"
    assert (by_name.batch, by_name.block_in, by_name.block_out) == (1, 8, 8)
    _, out, _ = cli("config", "check", "small", "--json")
    import json
    j = json.loads(out)
    assert by_name.peak_macs_per_cycle == j["peak_macs_per_cycle"]
    assert by_name.clock_mhz == j["clock_mhz"]
    by_name.check()


def test_unknown_config_name_is_the_commands_error():
    with pytest.raises(vacc.Error) as e:
        vacc.Config("nosuch")
    assert str(e.value) == cli_error("config", "check", "nosuch")


def test_derive_changes_keys_and_the_command_reads_the_same(tmp_path):
    c = vacc.Config("default").derive({"gemm.block_in": 32, "gemm.block_out": 32},
                                      clock_mhz=200, name="wider")
    assert (c.name, c.block_in, c.block_out, c.clock_mhz) == ("wider", 32, 32, 200)
    path = tmp_path / "wider.yaml"
    path.write_text(c.yaml)
    import json
    j = json.loads(cli("config", "check", path, "--json")[1])
    assert j["name"] == "wider"
    assert j["gemm"]["block_in"] == 32 and j["gemm"]["block_out"] == 32
    assert j["peak_macs_per_cycle"] == c.peak_macs_per_cycle == 1024
    # The base is unchanged.
    assert vacc.Config("default").block_in == 16


@pytest.mark.parametrize("changes", [{"gemm.block_out": 12}, {"gemm.blok_in": 8},
                                     {"buffers.inp_kib": 0}])
def test_derived_rule_errors_are_the_commands(tmp_path, changes):
    base = vacc.Config("default")
    with pytest.raises(vacc.Error) as e:
        base.derive(changes)
    # The same keys in a file, checked by the command: the same message but for the name of
    # the text at fault.
    path = tmp_path / "bad.yaml"
    doc = yaml.safe_load(base.yaml)
    for key, value in changes.items():
        section, _, leaf = key.partition(".")
        doc.setdefault(section, {})[leaf] = value
    path.write_text(yaml.safe_dump(doc))
    expected = cli_error("config", "check", path).replace(str(path), "")
    message = str(e.value)
    source = message.split(":", 1)[0]
    assert source.startswith(base.source + " with ")
    assert message.replace(source, "", 1) == expected


def test_a_config_written_by_pyyaml_means_the_same(tmp_path):
    # PyYAML (YAML 1.1) reads the words on/off as booleans and writes them back as true/false:
    # the config the command reads from its output is the same one.
    import json
    base = vacc.Config("small").derive({"gemm.dsp_packing": "on", "extensions.alu_clip": "on"})
    path = tmp_path / "through_pyyaml.yaml"
    path.write_text(yaml.safe_dump(yaml.safe_load(base.yaml)))
    assert "dsp_packing: true" in path.read_text() and "alu_clip: true" in path.read_text()
    j = json.loads(cli("config", "check", str(path), "--json")[1])
    assert j["gemm"]["dsp_packing"]["setting"] == "on"
    assert j["extensions"]["alu_clip"] is True
    off = vacc.Config("small").derive({"gemm.dsp_packing": "off"})
    path.write_text(yaml.safe_dump(yaml.safe_load(off.yaml)))
    j = json.loads(cli("config", "check", str(path), "--json")[1])
    assert j["gemm"]["dsp_packing"]["setting"] == "off"
    assert j["extensions"]["alu_clip"] is False
