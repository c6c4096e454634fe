"""redaction-pressure, the one-turn environment: a reply of regex rules, scored on hidden records.

`rules` parses and checks the reply, `scanner` runs the rules within the episode budget, `rubric`
grades the removal, `scoring` puts them together for one episode; `pool` (with `supervision`
for its processes and `jobs` for what crosses their pipes) and `worker` run that scoring in
child processes for the taskset; `api` is the plain Python face (`load_task`,
`score_reply`), `taskset` and `harness` the verifiers adapters, `policies` the reference answers
and baselines. It stands on the shared floor (`corpus`, `splits`, `seal`, `spans`, `identity`)
and imports nothing of the audit environment.
"""
