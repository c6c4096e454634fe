"""The run report: one self-contained HTML page showing what a model's rules did.

`runs.find_runs` reads vf-eval or vf-replay output, `analysis` summarises it and marks
each public record with what was removed, `charts` draws with matplotlib, and `render`
fills the Jinja2 template. Needs the `report` extra (jinja2, matplotlib).
"""
