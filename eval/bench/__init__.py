"""Every benchmark of the project, one a module, each a command: `python -m aqgr.eval.bench.NAME --help`.

They measure costs (time, memory, disk) and agreements, never the evaluation's scores (that is
`python -m aqgr.eval`); each stands alone, over what they share (`common`, `synthetic_archive`,
`llama_server`). The index-only scale benchmark that once stood beside `pipeline` (bench_scale,
the index before format 4) is gone: `pipeline` measures today's index through the archive, and
`pipeline --backend milvus` the Milvus backend.
"""
