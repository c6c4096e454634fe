"""The report's numbers: records marked by what was removed, bootstrap intervals, pass@k, and task-level
statistics (task means, spread, comparison by task key, secrets-audit runs grouped the same way).
"""

from __future__ import annotations

import unittest
from pathlib import Path

from redaction_pressure.report import analysis, runs, stats
from redaction_pressure.spans import Record, Span


class TestMarks(unittest.TestCase):
    def test_each_span_gets_the_status_of_what_was_removed(self):
        """Secrets read removed, partial or missed and decoys touched or intact, cut at removal edges."""
        text = "a=SECRET1 b=SECRET2 c=SECRET3 d=DECOY1 e=DECOY2 tail"
        record = Record(
            text=text,
            secrets=(
                Span(start=2, end=9, kind="k"),
                Span(start=12, end=19, kind="k"),
                Span(start=22, end=29, kind="k"),
            ),
            decoys=(Span(start=32, end=38, kind="d"), Span(start=41, end=47, kind="d")),
            family="f",
        )
        runs_ = ((2, 9), (12, 15), (32, 33), (48, 52))
        pieces = analysis.pieces(record, runs_)
        labelled = [(piece.role, piece.status) for piece in pieces if piece.role]
        self.assertEqual(
            labelled,
            [
                ("secret", "removed"),
                ("secret", "partial"),
                ("secret", "missed"),
                ("decoy", "touched"),
                ("decoy", "intact"),
            ],
        )
        self.assertEqual("".join(text for piece in pieces for text, _ in piece.parts), text)
        removed = "".join(text for piece in pieces for text, gone in piece.parts if gone)
        self.assertEqual(removed, "SECRET1" + "SEC" + "D" + "tail")

    def test_bootstrap_interval_holds_the_mean_and_is_reproducible(self):
        """The 95% interval brackets the mean, is the same on every call, and is a point for constant data."""
        values = [0.0, 0.5, 1.0, 1.0, 0.25, 0.75]
        first, second = stats.bootstrap(values), stats.bootstrap(values)
        self.assertEqual(first, second)
        self.assertLess(first.low, first.mean)
        self.assertLess(first.mean, first.high)
        self.assertEqual(stats.bootstrap([0.4] * 5), stats.Interval(0.4, 0.4, 0.4))


def episode(key: str, reward: float, index: int = 0, error: str = "") -> runs.Episode:
    """A minimal scored (or errored) redaction-pressure rollout of task `key`."""
    return runs.Episode(
        task_id=key, split="dev", index=index, shown=8, hidden=32, prompt="", reply=None, reward=reward,
        components={"recall": reward, "precision": 1.0, "clean_gate": float(reward == 1.0)}, metrics={"validity": 1.0},
        errors=(), failures=(), identity={"split": "dev", "split_commitment": "c"}, started=None, error=error, key=key,
    )  # fmt: skip


def run_of(*episodes: runs.Episode, label: str = "m") -> runs.Run:
    return runs.Run(path=Path("traces.jsonl"), label=label, model=label, episodes=tuple(episodes))


class TestPassAtK(unittest.TestCase):
    def test_pass_at_k_is_the_unbiased_estimator(self):
        """pass@k equals 1 - C(n-c, k) / C(n, k) on known cases, 1 when fewer than k rollouts failed."""
        cases = {  # (n, c, k): pass@k
            (3, 0, 1): 0.0, (3, 3, 1): 1.0, (3, 1, 1): 1 / 3, (3, 1, 2): 2 / 3, (3, 2, 2): 1.0,
            (5, 2, 2): 1 - 3 / 10, (10, 3, 5): 1 - 21 / 252, (1, 1, 1): 1.0, (1, 0, 1): 0.0,
        }  # fmt: skip
        for (n, c, k), expected in cases.items():
            with self.subTest(n=n, c=c, k=k):
                self.assertAlmostEqual(stats.pass_at_k(n, c, k), expected, places=12)

    def test_impossible_counts_are_refused(self):
        """k of 0 or above n, and c above n, raise ValueError naming the numbers."""
        for n, c, k in ((3, 1, 0), (3, 1, 4), (3, 4, 1), (3, -1, 1)):
            with self.subTest(n=n, c=c, k=k), self.assertRaises(ValueError) as caught:
                stats.pass_at_k(n, c, k)
            self.assertIn(f"n={n}, c={c}, k={k}", str(caught.exception))

    def test_the_curve_averages_tasks_and_stops_at_the_fewest_rollouts(self):
        """pass@k over tasks is the mean of each task's pass@k, for k up to the fewest rollouts of a scored task."""
        curve = stats.pass_curve([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.0, 0.0]])
        self.assertEqual(list(curve), [1, 2, 3])
        self.assertAlmostEqual(curve[1], (1 / 3 + 1 + 0) / 3)
        self.assertAlmostEqual(curve[2], (2 / 3 + 1 + 0) / 3)
        self.assertAlmostEqual(curve[3], (1 + 1 + 0) / 3)
        self.assertEqual(list(stats.pass_curve([[1.0, 1.0, 0.0], [0.0, 1.0], []])), [1, 2], "an empty task is left out")
        self.assertEqual(stats.pass_curve([[], []]), {})

    def test_a_pass_is_the_full_score_up_to_rounding(self):
        """A reward of 1.0 less float rounding passes; 0.99 does not."""
        self.assertTrue(stats.passed(0.9999999999999))
        self.assertTrue(stats.passed(1.0))
        self.assertFalse(stats.passed(0.99))


class TestTaskStatistics(unittest.TestCase):
    def test_more_rollouts_of_one_task_do_not_narrow_the_interval(self):
        """Three rollouts of one task give the interval of its mean taken once; a rollout-level bootstrap would be narrower."""
        means = [0.25, 0.75, 0.5, 1.0, 0.0]
        repeated = [[0.25, 0.25, 0.25], [0.75], [0.5], [1.0], [0.0]]
        once = stats.task_bootstrap([[value] for value in means])
        grouped = stats.task_bootstrap(repeated)
        self.assertEqual(grouped, once)
        self.assertEqual(once, stats.bootstrap(means))
        flat = stats.bootstrap([value for rewards in repeated for value in rewards])
        self.assertLess(flat.high - flat.low, grouped.high - grouped.low, "counting rollouts as tasks would narrow it")

    def test_the_headline_is_the_mean_of_task_means(self):
        """A task with three 0.0 rollouts and one with a single 1.0 average to 0.5, not 0.25."""
        summary = analysis.summarise(
            run_of(episode("a", 0.0), episode("a", 0.0), episode("b", 1.0, 1), episode("a", 0.0))
        )
        self.assertEqual((summary.tasks, summary.rollouts, summary.per_task), (2, 4, 3))
        self.assertEqual(summary.reward.mean, 0.5)
        self.assertEqual(summary.recall, 0.5)

    def test_within_task_spread_and_pass_at_k_of_a_run(self):
        """The summary's within-task std is the mean of the tasks' sample stds; pass@k comes from each task's passes."""
        summary = analysis.summarise(run_of(*(episode("a", r) for r in (1.0, 0.0, 1.0)),
                                            *(episode("b", r, 1) for r in (0.5, 0.5, 0.5))))  # fmt: skip
        self.assertAlmostEqual(summary.within_std, (stats.std([1.0, 0.0, 1.0]) + 0.0) / 2)
        self.assertAlmostEqual(summary.pass_at[1], (2 / 3 + 0) / 2)
        self.assertAlmostEqual(summary.pass_at[2], (1 + 0) / 2)
        self.assertIsNone(analysis.summarise(run_of(episode("a", 1.0), episode("b", 0.0, 1))).within_std)

    def test_an_errored_rollout_is_left_out_of_its_task(self):
        """A task whose second rollout errored counts by its scored rollout; a task with none scored is left out."""
        summary = analysis.summarise(run_of(episode("a", 1.0), episode("a", 0.0, error="ProviderError"),
                                            episode("b", 0.0, 1, error="ProviderError")))  # fmt: skip
        self.assertEqual((summary.tasks, summary.scored_tasks, summary.errored, summary.scored), (2, 1, 2, 1))
        self.assertEqual(summary.reward.mean, 1.0)

    def test_runs_are_compared_by_task_key_on_task_means(self):
        """Three rollouts per task in any order against one per task in reverse order: paired by key, task means compared."""
        a = run_of(episode("t1", 1.0), episode("t2", 0.0, 1), episode("t1", 0.0), episode("t2", 0.5, 1),
                   episode("t1", 0.5), episode("t2", 1.0, 1), label="a")  # fmt: skip
        b = run_of(episode("t2", 1.0, 1), episode("t1", 0.5), label="b")
        difference = analysis.compare(a, b)
        self.assertEqual(difference.tasks, 2)
        self.assertTrue(difference.rollouts)
        self.assertEqual(sorted(difference.per_task), [("t1", 0.5, 0.5), ("t2", 0.5, 1.0)])
        self.assertEqual(difference.mean.mean, 0.25)

    def test_audit_runs_group_the_same_way(self):
        """secrets-audit episodes of two tasks, three rollouts each: two tasks, six rollouts, pass@1..3, task-mean reward."""
        from redaction_pressure.report import audit

        def rollout(index: int, reward: float) -> audit.AuditEpisode:
            return audit.AuditEpisode(
                task_id=f"audit-dev-{index:05d}", split="dev", index=index, scenario="git_basics", difficulty="easy",
                budget=10, reward=reward, metrics={"detection": reward, "health": 1.0, "steps": 5.0}, facts={},
                identity={}, started=None, key=f"audit-dev-{index:05d}",
            )  # fmt: skip

        episodes = [
            rollout(0, 1.0),
            rollout(1, 0.0),
            rollout(0, 1.0),
            rollout(1, 0.5),
            rollout(0, 0.4),
            rollout(1, 0.0),
        ]
        summary = audit.summarise(episodes)
        self.assertEqual((summary.tasks, summary.rollouts, summary.per_task), (2, 6, 3))
        self.assertAlmostEqual(summary.reward.mean, (2.4 / 3 + 0.5 / 3) / 2)
        self.assertEqual(list(summary.pass_at), [1, 2, 3])
        self.assertAlmostEqual(summary.pass_at[1], (2 / 3 + 0) / 2)
        ((_, _, group),) = audit.breakdown(episodes)
        self.assertEqual(group.tasks, 2)


if __name__ == "__main__":
    unittest.main()
