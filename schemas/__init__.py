"""Data that crosses the borders between aqgr's stages.

`summary` is the structured summary (the product of stage 1, the input of stage 2),
`results` what a search returns, `validation` the JSON Schema check every stored
summary passes.
"""
