"""redaction-pressure for TRL's GRPOTrainer without a server: a `reward_funcs` callable.

    from datasets import load_from_disk
    from trl import GRPOConfig, GRPOTrainer
    from redaction_pressure.trl import reward_function

    train = load_from_disk("exports/train")          # redaction-pressure export train --size N --out ...
    GRPOTrainer(model=..., reward_funcs=reward_function, train_dataset=train, args=GRPOConfig(...)).train()

The dataset's `prompt` column is the chat (system + user) TRL samples from; TRL passes every other
column to the reward function by name, one value per completion. `reward_function` rebuilds each
row's task from `split`, `index`, `difficulty` and the sizes of `shown` and `hidden` (a task is a
function of them; the rows' records are not trusted) and scores the completion's text with
`score_reply`: the very reward `vf-eval` gives the same reply. TRL itself is not a dependency.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from redaction_pressure.corpus import DEFAULT_DIFFICULTY
from redaction_pressure.redact.api import DEFAULT_HIDDEN, DEFAULT_SHOWN, RedactionTask, load_task, score_reply


@lru_cache(maxsize=256)
def _task(split: str, index: int, difficulty: str, shown: int, hidden: int) -> RedactionTask:
    return load_task(split, index, shown=shown, hidden=hidden, difficulty=difficulty)


def completion_text(completion: Any) -> str:
    """The reply in a completion: a string (standard format) or the last assistant message (conversational)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    if isinstance(completion, list | tuple):
        replies = [m for m in completion if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
        return completion_text(replies[-1]) if replies else ""
    raise TypeError(f"a completion is a string or a list of chat messages, not {type(completion).__name__}")


def reward_function(
    completions: list[Any],
    split: list[str],
    index: list[int],
    difficulty: list[str] | None = None,
    shown: list[list] | None = None,
    hidden: list[list] | None = None,
    **_: Any,
) -> list[float]:
    """One reward per completion: `score_reply` on the task its dataset row names (TRL's `reward_funcs` signature)."""
    if not len(completions) == len(split) == len(index):
        raise ValueError(f"{len(completions)} completions for {len(split)} rows: pass the dataset's split and index")
    rewards = []
    for i, completion in enumerate(completions):
        task = _task(
            split[i],
            int(index[i]),
            difficulty[i] if difficulty else DEFAULT_DIFFICULTY,
            len(shown[i]) if shown else DEFAULT_SHOWN,
            len(hidden[i]) if hidden else DEFAULT_HIDDEN,
        )
        rewards.append(score_reply(task, completion_text(completion)).reward)
    return rewards
