"""The Redis wire client: what the Redis stores, the Redis bus, the Redis rate limiter and the
audit spool use to reach Redis (one server, Redis Cluster or Sentinel-managed).

    resp.py         the RESP2 codec and ``RespConnection``, one pipelined asyncio connection
    pipelined.py    ``PipelinedRedis``: the hot-path client of one server (one connection per
                    event loop, concurrent commands pipelined), and the ``Pipelined`` interface
    cluster.py      ``PipelinedCluster``: the same interface on Redis Cluster (one
                    ``PipelinedRedis`` per master, commands routed by hash slot, MOVED/ASK/TRYAGAIN)
    topology.py     ``RedisTopology``: the ``mode`` option (standalone, cluster, sentinel) and the
                    redis-py clients for it
    connection.py   ``RedisConnector``: per event loop, the redis-py client and the pipelined one;
                    Redis failures as ``StoreUnavailable``

It knows nothing of sessions, events or channels: key layouts belong to the callers.
"""
