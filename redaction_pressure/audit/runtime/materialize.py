"""The MATERIALIZE runtime program: writes a plan's commits into `repo/` as a git history.

Run as `python -c <this text> INPUT`; INPUT is the JSON `programs.materialize_input(plan)` wrote
(deleted once read). Fixed authors and dates, so identical plans give identical commit ids;
`refs` become branches (a name with `/`) or tags; `notes` git notes on the commits they name;
`stashes` stash entries over the last commit. Imports only the standard library.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import json, os, shutil, subprocess, sys
payload = json.load(open(sys.argv[1]))
os.remove(sys.argv[1])
repo = os.path.abspath(payload["repo"])
shutil.rmtree(repo, ignore_errors=True)
os.makedirs(repo)
name, email = payload["author"]
env = dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_NAME=name,
           GIT_COMMITTER_EMAIL=email, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
def git(*args, **extra):
    subprocess.run(["git", *args], cwd=repo, env=dict(env, **extra), check=True, capture_output=True)
git("init", "-q", "-b", "main")
for key, value in (("user.name", name), ("user.email", email), ("commit.gpgsign", "false")):
    git("config", key, value)
shas = []
for i, commit in enumerate(payload["commits"]):
    for path, text in commit["files"]:
        full = os.path.join(repo, path)
        if text is None:
            os.remove(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if path.endswith(".sh"):
            os.chmod(full, 0o755)
    git("add", "-A")
    date = "%d +0000" % (1704110400 + 86400 * i)  # 2024-01-01 12:00 UTC, a day per commit
    git("commit", "-q", "-m", commit["message"], GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    shas.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip())
for name, upto in payload.get("refs", []):
    git("branch" if "/" in name else "tag", name, shas[upto - 1])
for name, upto, message in payload.get("tags", []):
    date = "%d +0000" % (1704110400 + 86400 * (upto - 1) + 3600)
    git("tag", "-a", name, "-m", message, shas[upto - 1], GIT_COMMITTER_DATE=date)
for upto, text in payload.get("notes", []):
    date = "%d +0000" % (1704110400 + 86400 * (upto - 1) + 7200)
    git("notes", "add", "-m", text, shas[upto - 1], GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
for i, (message, files) in enumerate(payload.get("stashes", [])):
    for path, text in files:
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    date = "%d +0000" % (1704110400 + 86400 * len(shas) + 600 * (i + 1))
    git("stash", "push", "-q", "-m", message, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
