// ONNX Runtime's CPU time on the models of bench/make_cpu_bench_models.py, for comparison with
// bench_cpu_backend. ONNX Runtime is not a dependency of vacc; install it into a scratch folder:
//   mkdir -p /tmp/ortbench && cd /tmp/ortbench && npm install --ignore-scripts onnxruntime-node
//   NODE_PATH=/tmp/ortbench/node_modules node bench/ort_cpu.js MODEL.onnx... [--iters N] [--threads T]
//       [--shape 1,3,224,224]   (the input's shape; default: by the benchmark model's name)
const ort = require('onnxruntime-node');

async function main() {
  const args = process.argv.slice(2);
  let iters = 50, threads = 0, shapeArg = null;
  const models = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--iters') iters = Number(args[++i]);
    else if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--shape') shapeArg = args[++i].split(',').map(Number);
    else models.push(args[i]);
  }
  for (const path of models) {
    const opts = {graphOptimizationLevel: 'all', executionProviders: ['cpu']};
    if (threads > 0) opts.intraOpNumThreads = threads;
    const session = await ort.InferenceSession.create(path, opts);
    const feeds = {};
    for (const name of session.inputNames) {
      // Shapes of the benchmark models' inputs, by model.
      const shape = shapeArg ? shapeArg
                  : path.includes('conv') ? [1, 64, 56, 56]
                  : path.includes('gemm') ? [1, 1024] : [1024, 1024];
      const n = shape.reduce((a, b) => a * b, 1);
      const data = new Float32Array(n);
      for (let i = 0; i < n; ++i) data[i] = Math.random() * 2 - 1;
      feeds[name] = new ort.Tensor('float32', data, shape);
    }
    await session.run(feeds);
    const ms = [];
    for (let i = 0; i < iters; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((a, b) => a - b);
    console.log(`${path}: median ${ms[Math.floor(ms.length / 2)].toFixed(3)} ms, min ${ms[0].toFixed(3)} ms (${iters} runs)`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
