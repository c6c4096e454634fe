"""redaction-pressure as an OpenEnv environment: reset gives the prompt, one step scores the reply.

The OpenEnv adapter of the one-turn wing, over the same core as the verifiers taskset:
`api.load_task` builds the task, `api.score_reply` scores the reply (the taskset's rewards read
the same `ScoreResult`), so a step's `reward`, `recall`, `precision`, `clean_gate` and
`redaction_errors` are the numbers `score_reply` gives for that reply. One step ends the
episode (`done`); a step before reset or after the end is refused with a one-line error.

Tasks: `reset(split=, index=, difficulty=, shown=, hidden=)`, or `reset(seed=N)`, which is train
task N (so a seed reproduces a task exactly, and names one anybody can rebuild). private_eval
reads `REDACTION_PRESSURE_PRIVATE_SEED` from the server's environment, as everywhere; the
observation carries the split's commitment from the start and the derived seed only in the
step that ends the episode, never the secret. Task listing is OpenEnv's task provider
(`list_splits`, `num_tasks`, `get_task`, ...): the public splits' sizes and, per task, its
split, index and difficulty.

Nothing imports this module but the OpenEnv server (`cli/serve_openenv.py`); it needs the
`openenv` package, which cannot share an environment with verifiers (servers/openenv).
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from redaction_pressure import splits
from redaction_pressure.corpus import DEFAULT_DIFFICULTY, DIFFICULTIES
from redaction_pressure.redact.api import DEFAULT_HIDDEN, DEFAULT_SHOWN, RedactionTask, load_task, score_reply

MAX_REPLY_CHARS = 65_536
"""Characters of a reply a step takes (a rule set of 24 patterns of 512 characters is ~13,000)."""
PREVIEW = 64
"""Tasks `list_tasks` returns for an unbounded split (train); `num_tasks` still says how many there are."""


class RedactionAction(Action):
    """The model's reply: one JSON object of rules, as the system prompt asks."""

    reply: str = Field(max_length=MAX_REPLY_CHARS, description="the reply text, scored as vf-eval scores it")


class RedactionObservation(Observation):
    """The prompt at reset; the score once the reply is in."""

    system_prompt: str = ""
    user_prompt: str = ""
    task: dict[str, Any] = Field(default_factory=dict, description="split, index, difficulty and the identity block")
    recall: float | None = None
    precision: float | None = None
    clean_gate: float | None = None
    valid: bool | None = None
    redaction_errors: list[dict[str, Any]] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = Field(
        default=None, description="the task's seed: at reset for public splits, at the end for private_eval"
    )


class RedactionState(State):
    split: str | None = None
    index: int | None = None
    difficulty: str | None = None
    done: bool = False


def task_for(
    split: str | None,
    index: int | None,
    seed: int | None,
    difficulty: str,
    shown: int,
    hidden: int,
) -> RedactionTask:
    """The task a reset names; ValueError with one line when it names none."""
    split, index = splits.reset_target(split, index, seed)
    split = split or "dev"
    if split not in splits.SPLITS:
        raise ValueError(f"unknown split {split!r}; the splits are {', '.join(splits.SPLITS)}")
    if index is None:
        index = 0
    if isinstance(index, bool) or not isinstance(index, int):
        raise ValueError(f"index must be an integer, got {type(index).__name__}")
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose one of {', '.join(DIFFICULTIES)}")
    splits.check_index(split, index)
    # NOTE: private_eval's missing or short secret raises SplitError naming the variable, never its value.
    return load_task(split, index, shown=shown, hidden=hidden, difficulty=difficulty)


class RedactionPressureEnvironment(Environment[RedactionAction, RedactionObservation, RedactionState]):
    """One one-turn episode a session at a time; sessions share nothing mutable (scoring runs
    in the process-wide scan pool, which charges each episode its own budget)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._task: RedactionTask | None = None
        self._done = False
        self._state = RedactionState()

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str | None = None,
        index: int | None = None,
        difficulty: str = DEFAULT_DIFFICULTY,
        shown: int = DEFAULT_SHOWN,
        hidden: int = DEFAULT_HIDDEN,
        **_: Any,
    ) -> RedactionObservation:
        task = task_for(split, index, seed, difficulty, shown, hidden)
        self._task, self._done = task, False
        self._state = RedactionState(
            episode_id=episode_id, step_count=0, split=task.split, index=task.index, difficulty=task.difficulty
        )
        return RedactionObservation(
            system_prompt=task.prompt.system,
            user_prompt=task.prompt.user,
            task=self._describe(task),
            seed=None if task.split == "private_eval" else splits.seed_for(task.split, task.index, task.difficulty),
            done=False,
            reward=None,
        )

    def step(self, action: RedactionAction, timeout_s: float | None = None, **_: Any) -> RedactionObservation:
        if self._task is None:
            raise RuntimeError("step before reset: reset the environment to get a task first")
        if self._done:
            raise RuntimeError("the episode is over (one reply a task): reset for the next task")
        task = self._task
        result = score_reply(task, action.reply)
        self._done = True
        self._state.step_count += 1
        self._state.done = True
        return RedactionObservation(
            task=self._describe(task),
            recall=result.recall,
            precision=result.precision,
            clean_gate=result.clean_gate,
            valid=result.valid,
            redaction_errors=[e.to_dict() for e in result.errors],
            metrics=dict(result.metrics),
            seed=splits.seed_for(task.split, task.index, task.difficulty),
            done=True,
            reward=result.reward,
        )

    @property
    def state(self) -> RedactionState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        from redaction_pressure import identity

        return EnvironmentMetadata(
            name="redaction-pressure",
            description="Write regex redaction rules from the shown records of a stream; they run on later records "
            "the model never saw. Reward: 0.35 recall + 0.35 precision + 0.30 clean gate, 0 on any invalid answer.",
            version=identity.version(),
        )

    @staticmethod
    def _describe(task: RedactionTask) -> dict[str, Any]:
        return {
            "split": task.split,
            "index": task.index,
            "difficulty": task.difficulty,
            "identity": dict(task.identity),
        }

    # -- OpenEnv's task provider ------------------------------------------------------------------

    def list_splits(self) -> list[dict[str, Any]]:
        return [{"name": s, "type": "eval" if s != "train" else "train"} for s in splits.SPLITS]

    def num_tasks(self, split: str) -> int:
        return _size(split)

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [self.get_task(split, i) for i in range(min(_size(split), PREVIEW))]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        if not 0 <= index < _size(split):
            raise IndexError(f"{split} has tasks 0 to {_size(split) - 1}")
        return {"id": f"{split}-{index}", "split": split, "index": index, "difficulties": list(DIFFICULTIES)}

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return [self.get_task(split, i) for i in range(_size(split))[slice(start, stop)][:PREVIEW]]


def _size(split: str) -> int:
    sizes = {"train": splits.TRAIN_MAX_INDEX, "dev": splits.DEV_SIZE, "private_eval": splits.PRIVATE_MAX_INDEX}
    if split not in sizes:
        raise ValueError(f"unknown split {split!r}; the splits are {', '.join(splits.SPLITS)}")
    return sizes[split]


# -- the client ------------------------------------------------------------------------------------


class RedactionPressureEnv(EnvClient):
    """OpenEnv's WebSocket client for this environment: `reset(split=, index=, difficulty=)` then
    `step(RedactionAction(reply=...))`; results are `StepResult[RedactionObservation]`."""

    def _step_payload(self, action: RedactionAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]):
        fields = dict(payload.get("observation") or {})
        fields.update(done=payload.get("done", False), reward=payload.get("reward"))
        return StepResult(
            observation=RedactionObservation.model_validate(fields),
            reward=payload.get("reward"),
            done=payload.get("done", False),
        )

    def _parse_state(self, payload: dict[str, Any]) -> RedactionState:
        return RedactionState.model_validate(payload)
