"""The helpers of the conformance suite, by job; the fixtures that use them are in ../conftest.py.

- `common`: the checkout's paths, the pinned CLIs and a run of one, the quiet environment of every
  run, workspace executables built by cargo, small shared values (`said`, `jsonl`, `RED_PNG`, …).
- `mocks`: the scripted mock model servers (`Mock`, `start_mock`) and the replies tests script.
- `runtimes`: each runtime's private HOME, environment and non-interactive run (`run_claude`,
  `run_codex`, `run_opencode`, `run_gemini`, `run_pi`) and `runtime_env` for the host.
- `gemini_files`: Gemini CLI's project registry and session files (placing and reading them).
- `processes`: which processes still run (by PID group, HOME, working directory or a marker).
- `drivers`: the library in each language (Python, Node, Rust) running one job.
- `host`: what the host tests share (the `Rig` of a runtime, turns sent in the background).
- `switch`: a session imported, written for another runtime and resumed there, and the API rules
  the request must follow.
- `serve`: a client of `sna serve` (also used by scripts/bench-serve.py).

Nothing here starts a process at import time, and every helper takes the folders it writes in,
so tests stay independent of each other (the suite runs under pytest-xdist)."""
