"""A small dask.distributed LocalCluster for the tests that need one."""

import contextlib


@contextlib.contextmanager
def local_client(*, processes):
    """A Client on two one-thread workers (in-process threads or processes), closed after."""
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=20)
        cluster.close(timeout=20)
