"""sglang-wizard core: profiles, the SGLang rule engine, model facts, remote launch. Never imports Textual."""

__version__ = "0.1.0"
