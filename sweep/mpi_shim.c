/* The few MPI calls vacc sweep makes, in a module (libvacc_mpi.so) that vacc loads with
 * dlopen() only when an MPI launcher started it: a plain vacc never maps Open MPI's
 * libraries (mpi_transport.cc). A C interface, so the module needs nothing from vacc. */
#include <mpi.h>

int vacc_mpi_init(int *rank, int *size) {
  if (MPI_Init(0, 0) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

void vacc_mpi_finalize(void) { MPI_Finalize(); }

void vacc_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int vacc_mpi_send(const char *data, int count, int to, int tag) {
  return MPI_Send(data, count, MPI_CHAR, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS;
}

/* 1 when a message from `from` (-1: anyone) waits, with its source, tag and size. */
int vacc_mpi_probe(int from, int *source, int *tag, int *count) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(from < 0 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return 0;
  *source = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  MPI_Get_count(&status, MPI_CHAR, count);
  return 1;
}

int vacc_mpi_recv(char *data, int count, int source, int tag) {
  return MPI_Recv(data, count, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
         MPI_SUCCESS;
}
