"""The pipeline: one search over one loaded index, and the pieces it is made of.

Holds the search itself (`search`: questions, retrieval, fusion, explanation), the statute search
beside it (`statutes`), the offline and model-backed question generators and explainers
(`questions`, `questions_llm`, `explain`, `explain_llm`, `relevance`), the checks on what a model
wrote (`citation_guard`, `grounding`), pinpoint citations (`pinpoint`), old and new codes as one
(`correspondence`) and the settings of an archive and a search (`config`).

It may import the stages below it (`aqgr.summarizer`, `aqgr.retrieval`, `aqgr.llm`, `aqgr.schemas`)
and `aqgr.foundation`, never `aqgr.archive`, `aqgr.eval` or `aqgr.interfaces`. Nothing is imported here.
"""
