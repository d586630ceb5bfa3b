"""Model providers: one small interface over Gemini, OpenAI-compatible servers and a scripted fake.

A low layer, just above `aqgr.schemas` and `aqgr.foundation` (`errors`, `registry`): it imports nothing from
the stages above it, so the summarizer engines may use it. Provider SDKs are imported inside
the functions that call them; importing this package loads none of them.

  base        LLMRequest, LLMReply, the Provider protocol and the `providers` registry
  config      ProviderConfig (provider, model, key, base URL, timeouts, retries, concurrency)
  client      LLMClient: retries with bounded backoff, concurrency limit, cache, ledger
  cache       SQLite response cache keyed by provider, model, prompt version and input hash
  ledger      TokenLedger: calls, cache hits, retries and tokens per stage
  limits      provider quotas as token buckets; the client's RateLimiter seam (aqgr/archive/quota.py shares them)
  structured  JSON replies: parse, repair, validate, re-ask with the errors (bounded)
  prompts     versioned prompt templates shipped in the packages
  fake        `fake.v1`: scripted replies for tests (selectable by name)
  gemini      `gemini.v1` (google-genai), `gemini-legacy.v1` (google-generativeai, end-of-life)
  openai_compat  `openai.v1`: the OpenAI chat-completions wire format (Ollama, vLLM, llama.cpp, hosted)
"""
