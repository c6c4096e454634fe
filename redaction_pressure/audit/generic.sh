#!/usr/bin/env bash
# Program agent for the secrets-remediation task: discovers secrets in the
# repository (working tree, every git object, tag/commit messages), moves code
# to environment variables named after the repository's documented convention,
# removes credential-only / generated files, and rewrites history.
set -u
WS="$(pwd)"
[ -d "$WS/repo/.git" ] || { echo "no repo" >&2; exit 1; }
TMPD="$(mktemp -d "$WS/.agent-work.XXXXXX")"
cat > "$TMPD/agent.py" <<'PYEOF'
import base64, binascii, gzip, json, os, re, subprocess, sys, zlib, io
from urllib.parse import quote, unquote

REPO = sys.argv[1]
os.chdir(REPO)
PLACEHOLDER = "<redacted>"

def git(*args, inp=None, check=True):
    r = subprocess.run(["git", *args], input=inp, capture_output=True)
    if check and r.returncode:
        raise RuntimeError(f"git {args}: {r.stderr.decode(errors='replace')}")
    return r.stdout

def log(*a):
    print("[agent]", *a, file=sys.stderr)

# ----------------------------------------------------------------- load repo
def head_files():
    out = {}
    for p in git("ls-files", "-z").split(b"\0"):
        if not p:
            continue
        path = p.decode()
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            out[path] = f.read()
    return out

FILES = head_files()

def text_of(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return None

def all_blobs():
    """{sha: path} for every blob in the object store (reachable or not)."""
    paths = {}
    out = git("rev-list", "--all", "--objects").decode(errors="replace")
    for line in out.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2:
            paths.setdefault(parts[0], parts[1])
    seen = {}
    r = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check"], capture_output=True)
    for line in r.stdout.decode().splitlines():
        sha, typ, _ = line.split(" ")
        if typ == "blob":
            seen[sha] = paths.get(sha, "")
    # blobs only named in reflogs / index
    return seen

def cat_blob(sha):
    return git("cat-file", "blob", sha)

# ----------------------------------------------------------------- docs / conventions
def read_docs():
    texts = []
    for p, b in FILES.items():
        if p.lower().endswith((".md", ".rst", ".txt")) or os.path.basename(p).lower().startswith("readme"):
            t = text_of(b)
            if t:
                texts.append((p, t))
    return texts

DOCS = read_docs()
DOCTEXT = "\n".join(t for _, t in DOCS)

SERVICE_PREFIX = {}     # "services/checkout" -> "CHECKOUT_"
for m in re.finditer(r"`([\w./-]+)`\s+reads\s+`([A-Z][A-Z0-9]*_)<NAME>`", DOCTEXT):
    SERVICE_PREFIX[m.group(1).rstrip("/")] = m.group(2)
WEB_PREFIX = None
m = re.search(r"process\.env\.([A-Z][A-Z0-9]*_)<NAME>", DOCTEXT)
if m:
    WEB_PREFIX = m.group(1)
NAMED = []   # (description, VAR)
for m in re.finditer(r"(?:the\s+)?([A-Za-z][\w -]{2,60}?)\s*(?:is|:)\s*`([A-Z][A-Z0-9_]{2,})`", DOCTEXT):
    NAMED.append((m.group(1).strip().lower(), m.group(2)))
KEYMAP = {}  # js key -> VAR
for m in re.finditer(r"`([A-Za-z_]\w*)`\s*:\s*`([A-Z][A-Z0-9_]{2,})`", DOCTEXT):
    KEYMAP[m.group(1)] = m.group(2)
log("prefixes", SERVICE_PREFIX, "web", WEB_PREFIX, "named", NAMED, "keymap", KEYMAP)

def snake_upper(name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"[^A-Za-z0-9]+", "_", s)
    return s.strip("_").upper()

def words(s):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", s)
    return set(w for w in re.split(r"[^a-z0-9]+", s.lower()) if len(w) > 2)

def service_of(path):
    best = None
    for d in SERVICE_PREFIX:
        if path.startswith(d + "/") and (best is None or len(d) > len(best)):
            best = d
    return best

def env_prefix_of(path):
    svc = service_of(path)
    if svc:
        return SERVICE_PREFIX[svc]
    # fallback: common prefix of env vars the code around it reads
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        d = "/".join(parts[:depth])
        names = []
        for p, b in FILES.items():
            if p.startswith(d + "/") and p.endswith(".py"):
                t = text_of(b) or ""
                names += re.findall(r"environ(?:\.get)?\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']", t)
                names += re.findall(r"_env\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']", t)
        if names:
            pre = {n.split("_")[0] + "_" for n in names}
            if len(pre) == 1:
                return pre.pop()
    return ""

def named_var(hint_words):
    best, score = None, 0
    for desc, var in NAMED:
        dw = words(desc)
        sc = len(dw & hint_words)
        if sc > score:
            best, score = var, sc
    return best if score >= 1 else None

# ----------------------------------------------------------------- detection
SECRET_NAME = re.compile(r"(pass(word|wd|phrase)?|pwd|secret|token|api_?key|apikey|private_?key|priv_?key|credential|auth|"
                         r"(^|[._-])key$|[a-z]Key$|_KEY$|^key$|signing|client_secret)", re.I)
DECOY_NAME = re.compile(r"(sandbox|test|example|dummy|fake|sample|public|publishable|anon|placeholder|fixture|mock|^k$)", re.I)
PLACEHOLDER_VAL = re.compile(r"^(\$\{.*\}|\$\(.*\)|\$[A-Z_]+|<.*>|%\(.*\)s|\{\{.*\}\}|x+|\*+|changeme|change-me|"
                             r"your[-_].*|.*example.*|none|null|true|false|todo|redacted|\*\*\*removed\*\*\*)$", re.I)
TOKEN_PATTERNS = [
    r"\bsk_live_[A-Za-z0-9]{16,}", r"\brk_live_[A-Za-z0-9]{16,}", r"\bwhsec_[A-Za-z0-9]{16,}",
    r"\bnpm_[A-Za-z0-9]{30,}", r"\bgh[pousr]_[A-Za-z0-9]{30,}", r"\bgithub_pat_[A-Za-z0-9_]{30,}",
    r"\bAKIA[0-9A-Z]{16}\b", r"\bASIA[0-9A-Z]{16}\b", r"\bxox[abprs]-[A-Za-z0-9-]{10,}", r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\bAIza[0-9A-Za-z_-]{35}", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", r"\bhttps://hooks\.slack\.com/services/[A-Za-z0-9/]+",
    r"\bdop_v1_[a-f0-9]{64}", r"\bshpat_[a-fA-F0-9]{32}", r"\bpypi-[A-Za-z0-9_-]{50,}",
]
JWT_RE = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
PEM_RE = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----\n?", re.S)

def b64pad(s):
    return s + "=" * (-len(s) % 4)

def jwt_payload(tok):
    try:
        return json.loads(base64.urlsafe_b64decode(b64pad(tok.split(".")[1])))
    except Exception:
        return None

def is_public_jwt(tok):
    p = jwt_payload(tok)
    if not isinstance(p, dict):
        return False
    role = str(p.get("role", "")).lower()
    return role in ("anon", "public", "anonymous")

def decoy_value(v, context=""):
    if len(v) < 8:
        return True
    if PLACEHOLDER_VAL.match(v.strip()):
        return True
    if re.match(r"^(sk|pk|rk)_test_", v) or v.startswith("pk_live_"):
        return True
    if JWT_RE.fullmatch(v) and is_public_jwt(v):
        return True
    if re.search(r"(test key|\(public\)|documented test|published test vector|not a secret)", context, re.I):
        return True
    if "{" in v or "process.env" in v or "os.environ" in v:
        return True
    if re.fullmatch(r"[a-z]+([-_.][a-z]+)*", v):      # plain words
        return True
    if re.fullmatch(r"(https?|s3|file)://\S+", v) and "@" not in v:
        return True
    if re.fullmatch(r"[\w.-]+\.(internal|example|local|com|org|net|io)(:\d+)?", v):
        return True
    if re.fullmatch(r"\d+", v):
        return True
    return False

def looks_random(v):
    classes = sum(bool(re.search(p, v)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return len(v) >= 12 and classes >= 2 and len(set(v)) >= 8

SECRETS = {}   # value -> info dict(kind, names, paths)
CARRIERS = {}  # carrier string -> set of secret values it hides

def add_secret(v, kind, path, name=None):
    if v is None:
        return
    v = v.strip() if kind != "pem" else v
    if len(v) < 8:
        return
    info = SECRETS.setdefault(v, {"kind": kind, "names": [], "paths": set()})
    if name:
        info["names"].append((name, path))
    info["paths"].add(path)

def try_decode_layers(s, depth=0):
    """Decode base64 / hex / gzip layers; return list of decoded texts."""
    out = []
    if depth > 4:
        return out
    cands = []
    st = s.strip()
    if re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", st) and len(st) >= 16:
        try:
            cands.append(base64.b64decode(b64pad(st), validate=True))
        except Exception:
            pass
    if re.fullmatch(r"[A-Za-z0-9_-]+={0,2}", st) and len(st) >= 16 and re.search(r"[_-]", st):
        try:
            cands.append(base64.urlsafe_b64decode(b64pad(st)))
        except Exception:
            pass
    if re.fullmatch(r"(?:[0-9a-fA-F]{2}){8,}", st) and len(st) % 2 == 0 and not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{32}", st):
        try:
            cands.append(binascii.unhexlify(st))
        except Exception:
            pass
    for c in cands:
        for raw in (c,):
            data = raw
            if data[:2] == b"\x1f\x8b":
                try:
                    data = gzip.decompress(data)
                except Exception:
                    continue
            elif data[:1] == b"\x78":
                try:
                    data = zlib.decompress(data)
                except Exception:
                    pass
            t = text_of(data)
            if t is None:
                continue
            if sum(ch.isprintable() or ch in "\n\r\t" for ch in t) < 0.95 * len(t):
                continue
            out.append(t)
            inner = t.strip()
            if re.fullmatch(r"[A-Za-z0-9+/=_-]{16,}", inner):
                out += try_decode_layers(inner, depth + 1)
    return out

PUBLIC = set()
SECRET_USE = re.compile(r"(authori[sz]ation|bearer|api[-_]?key|x-[a-z-]*key|x-[a-z-]*token|hmac|\bsign|token|passw|secret|\bauth|login|encrypt|decrypt|jwt|credential|basic\s)", re.I)
PUBLIC_USE = re.compile(r"(uuid|data-[a-z-]+=|<script|<img|<link|https?://[^\s\"']*\{|cdn|asset|namespace|\bhref|\bsrc=|widget|page_?tag|public|tracking|site_?id)", re.I)

def py_public_only(name, t):
    """True when every use of NAME in the module is public (ids, urls, page tags)."""
    uses = []
    for ln in t.splitlines():
        if re.search(r"\b%s\b" % re.escape(name), ln) and not re.match(r"^\s*%s\s*(?::[^=]*)?=" % re.escape(name), ln):
            uses.append(ln)
    if not uses:
        return False
    for u in uses:
        if SECRET_USE.search(u.replace(name, "")):
            return False
        if not PUBLIC_USE.search(u.replace(name, "")):
            return False
    return True

def scan_text(t, path, depth=0, record=True):
    """Find secrets in text t (file at path). Returns list of found values."""
    found = []
    def hit(v, kind, name=None):
        if v and not decoy_value(v) :
            if record:
                add_secret(v, kind, path, name)
            found.append(v)
    lines = t.splitlines()
    base = os.path.basename(path)
    # PEM private keys
    for m in PEM_RE.finditer(t):
        hit(m.group(0), "pem")
    # known token formats
    for pat in TOKEN_PATTERNS:
        for m in re.finditer(pat, t):
            line = t[t.rfind("\n", 0, m.start()) + 1: t.find("\n", m.end()) if t.find("\n", m.end()) >= 0 else len(t)]
            if not decoy_value(m.group(0), line):
                hit(m.group(0), "token")
    for m in JWT_RE.finditer(t):
        tok = m.group(0)
        if not is_public_jwt(tok):
            line_start = t.rfind("\n", 0, m.start()) + 1
            line = t[line_start:t.find("\n", m.end())]
            if re.search(r"anon|public", line.split(tok)[0][-40:], re.I):
                continue
            hit(tok, "jwt")
    for ln in lines:
        ctx = ln
        # assignments in code:  NAME = "value"  /  name: str = "value"
        for m in re.finditer(r"\b([A-Za-z_][\w]*)\s*(?::\s*[\w\[\], .]+)?\s*=\s*[rbuf]?([\"'])([^\"'\n]{8,})\2", ln):
            name, v = m.group(1), m.group(3)
            if SECRET_NAME.search(name) and not DECOY_NAME.search(name) and not decoy_value(v, ctx):
                if path.endswith(".py") and py_public_only(name, t):
                    PUBLIC.add(v)
                    continue
                hit(v, "assign", name)
        # key: "value" (js / json / yaml)
        for m in re.finditer(r"[\"']?([A-Za-z_][\w.-]*)[\"']?\s*:\s*[\"']([^\"'\n]{8,})[\"']", ln):
            name, v = m.group(1), m.group(2)
            if SECRET_NAME.search(name) and not DECOY_NAME.search(name) and not decoy_value(v, ctx):
                hit(v, "kv", name)
        # yaml unquoted  key: value
        m = re.match(r"^\s*-?\s*([A-Za-z_][\w.-]*)\s*:\s*([^\s\"'#{}\[\]][^\s#]{7,})\s*$", ln)
        if m:
            name, v = m.group(1), m.group(2)
            if SECRET_NAME.search(name) and not DECOY_NAME.search(name) and not v.startswith("$") and not decoy_value(v, ctx):
                decoded = try_decode_layers(v)
                if decoded:
                    for d in decoded:
                        inner = scan_text(d, path, depth + 1, record)
                        if inner:
                            CARRIERS.setdefault(v, set()).update(inner)
                        elif len(d.strip()) >= 8 and not decoy_value(d.strip()):
                            hit(d.strip(), "decoded", name)
                            CARRIERS.setdefault(v, set()).add(d.strip())
                else:
                    hit(v, "yaml", name)
        # shell / env / npmrc:  NAME=value
        for m in re.finditer(r"(?:^|\s|export\s+)([A-Za-z_:/.@-]*?([A-Za-z]*(?:PASSWORD|PASSWD|TOKEN|SECRET|API_KEY|_KEY|_authToken|_auth|_password)))\s*=\s*([\"']?)([^\"'\s$`]+)\3", ln):
            v = m.group(4)
            if not DECOY_NAME.search(m.group(2)) and not decoy_value(v, ctx):
                hit(v, "env", m.group(2))
        # URL credentials
        for m in re.finditer(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://([^\s:/@{}'\"]+):([^\s@{}'\"/]+)@", ln):
            pw = unquote(m.group(3))
            if not decoy_value(pw) and len(pw) >= 6:
                hit(pw, "url", m.group(2))
        # docker registry logins
        m = re.search(r"\"auth\"\s*:\s*\"([A-Za-z0-9+/=]{12,})\"", ln)
        if m:
            try:
                dec = base64.b64decode(m.group(1)).decode()
                if ":" in dec:
                    hit(m.group(1), "dockerauth", "auth")
                    user, pw = dec.split(":", 1)
                    if len(pw) >= 8:
                        hit(pw, "dockerpw", "auth")
                        CARRIERS.setdefault(m.group(1), set()).add(pw)
            except Exception:
                pass
    # long base64-ish blobs anywhere: decode and scan
    if depth < 3:
        for m in re.finditer(r"[A-Za-z0-9+/_-]{40,}={0,2}", t):
            s = m.group(0)
            if s in CARRIERS or JWT_RE.fullmatch(s):
                continue
            for d in try_decode_layers(s):
                inner = scan_text(d, path, depth + 1, record)
                inner += [v for v in SECRETS if len(v) >= 8 and v in d]
                if inner:
                    CARRIERS.setdefault(s, set()).update(inner)
    return found

# ---- scan HEAD, then every blob and message
for p, b in FILES.items():
    t = text_of(b)
    if t is not None:
        scan_text(t, p)

BLOBS = all_blobs()
HEAD_SHAS = {}
for line in git("ls-tree", "-r", "HEAD").decode().splitlines():
    meta, p = line.split("\t", 1)
    HEAD_SHAS[p] = meta.split()[2]
BLOB_DATA = {}
for sha, p in BLOBS.items():
    data = cat_blob(sha)
    BLOB_DATA[sha] = data
    t = text_of(data)
    if t is not None and HEAD_SHAS.get(p) != sha:
        scan_text(t, p or "?")

MESSAGES = []
for sha in git("rev-list", "--all").decode().split():
    MESSAGES.append(git("log", "-1", "--format=%B", sha).decode(errors="replace"))
for ref in git("for-each-ref", "--format=%(objectname) %(objecttype)", "refs/tags").decode().splitlines():
    sha, typ = ref.split()
    if typ == "tag":
        MESSAGES.append(git("cat-file", "-p", sha).decode(errors="replace"))
for msg in MESSAGES:
    scan_text(msg, "<message>")

# remove secrets that are substrings of decoys?  keep as is.
# drop secrets contained in other secrets only if they are PEM bodies (handled by PEM)
for v in PUBLIC:
    if v in SECRETS and SECRETS[v]["kind"] in ("assign", "kv", "yaml", "env"):
        del SECRETS[v]
log("public values kept:", sorted(PUBLIC))
log("secrets found:", len(SECRETS))
for v, info in SECRETS.items():
    log("  ", info["kind"], repr(v[:40]), sorted(info["paths"])[:4], info["names"][:2])

# ----------------------------------------------------------------- forms
def forms_of(v):
    fs = {v}
    if SECRETS.get(v, {}).get("kind") == "pem":
        body = re.sub(r"-----(BEGIN|END)[^-]+-----", "", v)
        for l in body.split():
            if len(l) >= 16:
                fs.add(l)
        fs.add(v.rstrip("\n"))
    vb = v.encode()
    for enc in (base64.b64encode(vb).decode(), base64.urlsafe_b64encode(vb).decode()):
        fs.add(enc)
        fs.add(enc.rstrip("="))
    fs.add(quote(v, safe=""))
    fs.add(quote(v))
    fs.add(quote(v, safe="").lower())
    fs.add(v.replace("/", "\\/"))
    fs.add(json.dumps(v)[1:-1])
    fs.add(vb.hex())
    fs.add(v[::-1])
    try:
        fs.add(base64.b32encode(vb).decode())
    except Exception:
        pass
    return {f for f in fs if len(f) >= 8}

ALL_FORMS = {}
for v in SECRETS:
    for f in forms_of(v):
        ALL_FORMS[f] = v
for c, vs in CARRIERS.items():
    ALL_FORMS[c] = next(iter(vs))
FORMS_SORTED = sorted(ALL_FORMS, key=len, reverse=True)

def contains_secret(t):
    return any(f in t for f in FORMS_SORTED)

def redact_text(t, repl=PLACEHOLDER):
    for m in list(PEM_RE.finditer(t)):
        if m.group(0) in SECRETS or m.group(0).rstrip("\n") in ALL_FORMS:
            t = t.replace(m.group(0), "")
    for f in FORMS_SORTED:
        if f in t:
            t = t.replace(f, repl)
    return t

# ----------------------------------------------------------------- variable naming
VAR_OF = {}

def python_var(v, name, path):
    # shared between several services -> documented shared variable
    py_paths = {p for (n, p) in SECRETS[v]["names"] if p.endswith(".py")} | {p for p in SECRETS[v]["paths"] if p.endswith(".py")}
    svcs = {service_of(p) or os.path.dirname(p) for p in py_paths}
    if len(svcs) >= 2:
        hw = set()
        for n, p in SECRETS[v]["names"]:
            hw |= words(n) | words(os.path.basename(p).rsplit(".", 1)[0])
        hw |= {"shared", "share", "several"}
        nv = named_var(hw)
        if nv:
            return nv
    up = snake_upper(name)
    if SECRETS[v]["kind"] == "url" or up in ("DATABASE_URL", "DB_URL", "DSN") or up.endswith("_URL"):
        up = "DB_PASSWORD" if "DB" in up or "DATABASE" in up else up.replace("URL", "PASSWORD")
    prefix = env_prefix_of(path)
    if prefix and not up.startswith(prefix):
        return prefix + up
    return up

def var_for(v, name, path, kind_hint=None):
    if v in VAR_OF:
        return VAR_OF[v]
    var = None
    if path.endswith(".py"):
        var = python_var(v, name, path)
    elif path.endswith((".js", ".ts", ".mjs", ".jsx", ".tsx")):
        var = KEYMAP.get(name) or ((WEB_PREFIX or "") + snake_upper(name))
    else:
        hw = words(name or "") | words(os.path.basename(path))
        if v.startswith("npm_") or ".npmrc" in path:
            hw |= {"npm"}
        nv = named_var(hw) if hw & {"npm", "token"} else None
        var = nv or snake_upper(name or "SECRET")
    VAR_OF[v] = var
    return var

# ----------------------------------------------------------------- working tree fixes
NEW = {}          # path -> new bytes (None = delete)
IGNORE = []       # .gitignore patterns to add

def ensure_import_os(t):
    if re.search(r"^import os\b|^import .*\bos\b|^from os import", t, re.M):
        return t
    lines = t.split("\n")
    idx = 0
    # after docstring / __future__ imports
    i = 0
    if lines and lines[0].startswith(('"""', "'''")):
        q = lines[0][:3]
        if lines[0].count(q) >= 2 and len(lines[0]) > 3:
            i = 1
        else:
            i = 1
            while i < len(lines) and q not in lines[i]:
                i += 1
            i += 1
    while i < len(lines) and (lines[i].strip() == "" or lines[i].startswith("from __future__")):
        i += 1
    lines.insert(i, "import os")
    return "\n".join(lines)

def ensure_import_quote(t):
    if re.search(r"^from urllib\.parse import .*\bquote\b", t, re.M):
        return t
    t2 = ensure_import_os(t)
    return re.sub(r"^(import os\b.*)$", r"\1\nfrom urllib.parse import quote", t2, count=1, flags=re.M)

def env_expr_py(var, t):
    return f'os.environ.get("{var}", "")'

def fix_python(path, t):
    orig = t
    out_lines = []
    need_quote = False
    lines = t.split("\n")
    for ln in lines:
        new = ln
        # assignments with literal secret
        m = re.match(r"^(\s*)([A-Za-z_]\w*)(\s*(?::\s*[\w\[\], .]+)?\s*=\s*)[rbu]?([\"'])([^\"'\n]*)\4(.*)$", ln)
        if m and m.group(5) in SECRETS:
            indent, name, eq, _, v, rest = m.groups()
            var = var_for(v, name, path)
            is_field = ":" in eq and indent
            if is_field and re.search(r"^def _env\(", t, re.M):
                expr = f'_env("{var}", "")'
            elif is_field and re.search(r"\bfield\b", t):
                expr = f'field(default_factory=lambda: os.environ.get("{var}", ""))'
            else:
                expr = f'os.environ.get("{var}", "")'
            rest = re.sub(r"#.*", "", rest).rstrip()
            new = f"{indent}{name}{eq}{expr}{rest}"
        else:
            # f-string / string with URL credentials
            um = re.search(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://([^\s:/@{}'\"]+):([^\s@{}'\"/]+)@", ln)
            if um and unquote(um.group(3)) in SECRETS:
                pw = unquote(um.group(3))
                am = re.match(r"^(\s*)([A-Za-z_]\w*)\s*(?::\s*\w+)?\s*=\s*(f?)([\"'])", ln)
                indent = am.group(1) if am else re.match(r"^(\s*)", ln).group(1)
                pname = "DB_PASSWORD"
                if am:
                    an = am.group(2)
                    pname = "DB_PASSWORD" if re.search(r"DB|DATABASE", an, re.I) else snake_upper(an).replace("URL", "PASSWORD")
                    if an.islower():
                        pname = pname.lower()
                var = var_for(pw, pname, path)
                # the variable code already reads for this
                newln = ln[:um.start(3)] + "{quote(" + pname + ", safe='')}" + ln[um.end(3):]
                if am and not am.group(3):
                    # make it an f-string
                    q = am.group(4)
                    pos = am.end() - 1
                    newln = newln[:pos] + "f" + newln[pos:]
                new = f'{indent}{pname} = os.environ.get("{var}", "")\n' + newln
                need_quote = True
        # any remaining secret form on the line
        if contains_secret(new):
            for f in FORMS_SORTED:
                if f in new:
                    new = new.replace(f, "")
        out_lines.append(new)
    t = "\n".join(out_lines)
    if t != orig:
        t = ensure_import_os(t)
        if need_quote:
            t = ensure_import_quote(t)
    return t

def fix_js(path, t):
    def repl(m):
        key, q, v = m.group(1), m.group(2), m.group(3)
        if v in SECRETS:
            var = var_for(v, key, path)
            return f'{key}: process.env.{var} || ""'
        return m.group(0)
    t = re.sub(r"\b([A-Za-z_]\w*)\s*:\s*([\"'`])([^\"'`\n]+)\2", repl, t)
    def repl2(m):
        key, v = m.group(1), m.group(3)
        if v in SECRETS:
            var = var_for(v, key, path)
            return f'{key} = process.env.{var} || ""'
        return m.group(0)
    t = re.sub(r"\b([A-Za-z_]\w*)\s*=\s*([\"'`])([^\"'`\n]+)\2", repl2, t)
    return redact_text(t, "")

def fix_npmrc(path, t):
    def repl(m):
        v = m.group(2)
        if v in SECRETS:
            return m.group(1) + "${" + var_for(v, "npm token", path) + "}"
        return m.group(0)
    t = re.sub(r"((?:_authToken|_auth|_password|token)\s*=\s*)(\S+)", repl, t)
    return redact_text(t, "")

def fix_workflow(path, t):
    def repl(m):
        key, v = m.group(2), m.group(3).strip("\"'")
        if v in SECRETS:
            var = var_for(v, key, path)
            return m.group(1) + "${{ secrets." + var + " }}"
        return m.group(0)
    t = re.sub(r"^([ \t]*-?[ \t]*([A-Za-z_][\w-]*)[ \t]*:[ \t]*)(\S+)[ \t]*$", repl, t, flags=re.M)
    return redact_text(t, "")

def fix_shell(path, t):
    def repl(m):
        v = m.group(4)
        if v in SECRETS:
            var = VAR_OF.get(v)
            if not var:
                refs = re.findall(r"\$\{?([A-Z][A-Z0-9]*_)[A-Z0-9_]+", t)
                name = m.group(2)
                if refs and re.search(r"PASS", name, re.I):
                    var = VAR_OF[v] = refs[0] + "DB_PASSWORD"
                else:
                    var = var_for(v, name, path)
            return m.group(1) + '"${' + var + '}"'
        return m.group(0)
    t = re.sub(r"((?:export\s+)?([A-Za-z_]\w*)=)([\"']?)([^\"'\s]+)\3", repl, t)
    return redact_text(t, "")

def fix_yaml(path, t):
    def repl(m):
        v = m.group(3)
        vv = v.strip("\"'")
        if vv in ALL_FORMS or vv in CARRIERS or contains_secret(vv):
            return m.group(1) + '""'
        return m.group(0)
    t = re.sub(r"^([ \t]*-?[ \t]*([A-Za-z_][\w.-]*)[ \t]*:[ \t]*)(\S[^\n]*?)[ \t]*$", repl, t, flags=re.M)
    return redact_text(t, "")

def reencode_carrier(c):
    """Decode a layered carrier, redact, re-encode with the same layers."""
    st = c
    layers = []
    data = None
    cur = st
    for _ in range(5):
        try:
            raw = base64.b64decode(b64pad(cur), validate=True)
        except Exception:
            break
        layers.append("b64")
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
            layers.append("gz")
        t = text_of(raw)
        if t is None:
            return None
        cur = t
        if not re.fullmatch(r"[A-Za-z0-9+/=]{16,}", t.strip()):
            break
        cur = t.strip()
    if not layers:
        return None
    text = cur
    try:
        obj = json.loads(text)
        def walk(o):
            if isinstance(o, dict):
                return {k: walk(x) for k, x in o.items()}
            if isinstance(o, list):
                return [walk(x) for x in o]
            if isinstance(o, str):
                if o in SECRETS:
                    return ""
                if contains_secret(o):
                    # manifest text etc.
                    o2 = fix_yaml("x.yaml", o) if "\n" in o else redact_text(o, "")
                    return o2
            return o
        text = json.dumps(walk(obj), separators=(", ", ": "))
    except Exception:
        text = redact_text(text, "")
    data = text.encode()
    for layer in reversed(layers):
        if layer == "gz":
            data = gzip.compress(data, mtime=0)
        else:
            data = base64.b64encode(data)
    return data.decode()

def is_generated_or_credential(path, t):
    base = os.path.basename(path)
    low = path.lower()
    if re.search(r"\.tfstate(\.backup)?$", low):
        return "*.tfstate*"
    if re.search(r"(^|/)(dist|build|out)/", low) or low.endswith((".min.js", ".map")):
        m = re.search(r"^(.*?(?:^|/)(?:dist|build|out))/", path)
        return (m.group(1) + "/") if m else path
    if base == "config.json" and '"auths"' in (t or ""):
        return path
    if low.endswith((".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk")) or base in ("id_rsa", "id_ed25519", "id_ecdsa"):
        return path
    if base == ".env" or base.endswith(".env") and not base.endswith(".example.env"):
        return path
    if t is not None and low.endswith((".pem", ".crt", ".cer")):
        rest = PEM_RE.sub("", t).strip()
        if not rest:
            return path
    return None

def fix_priority(p):
    low = p.lower()
    if low.endswith(".py") and not re.search(r"(^|/)(tests?|vendor|third_party)/", low):
        return 0
    if low.endswith(".py"):
        return 1
    if low.endswith((".js", ".ts", ".mjs", ".jsx", ".tsx", ".cjs")):
        return 2
    return 3

for path in sorted(FILES, key=lambda p: (fix_priority(p), p)):
    b = FILES[path]
    t = text_of(b)
    if t is None:
        continue
    if not contains_secret(t) and not any(c in t for c in CARRIERS):
        continue
    gi = is_generated_or_credential(path, t)
    if gi:
        NEW[path] = None
        IGNORE.append(gi)
        continue
    base = os.path.basename(path)
    low = path.lower()
    if low.endswith(".py"):
        nt = fix_python(path, t)
    elif low.endswith((".js", ".ts", ".mjs", ".jsx", ".tsx", ".cjs")):
        nt = fix_js(path, t)
    elif base == ".npmrc" or base == ".yarnrc" or base == ".pypirc":
        nt = fix_npmrc(path, t)
    elif "/.github/workflows/" in "/" + path or low.endswith(".gitlab-ci.yml"):
        nt = fix_workflow(path, t)
    elif low.endswith((".sh", ".bash", ".zsh", ".envrc")) or base == "Makefile":
        nt = fix_shell(path, t)
    elif low.endswith(".ipynb"):
        # clear outputs that show a secret (line-wise, keep formatting)
        nl = []
        for ln in t.split("\n"):
            if contains_secret(ln) and re.match(r'^\s*"outputs"\s*:\s*\[.*\],?\s*$', ln):
                ln = re.sub(r'("outputs"\s*:\s*)\[.*\](,?)\s*$', r'\1[]\2', ln)
            nl.append(ln)
        nt = "\n".join(nl)
        if contains_secret(nt):
            try:
                nb = json.loads(nt)
                for c in nb.get("cells", []):
                    if contains_secret(json.dumps(c.get("outputs", []))):
                        c["outputs"] = []
                nt = json.dumps(nb, indent=1) + "\n"
            except Exception:
                pass
        nt = redact_text(nt, "")
    elif low.endswith((".yaml", ".yml")):
        # layered carriers (e.g. helm release records) are regenerated without the secret
        for c in sorted(CARRIERS, key=len, reverse=True):
            if c in t and len(c) > 100:
                r = reencode_carrier(c)
                if r and not contains_secret(r):
                    t = t.replace(c, r)
        nt = fix_yaml(path, t)
    elif low.endswith((".pem", ".crt", ".cer")):
        nt = PEM_RE.sub("", t)
    elif low.endswith(".json") or low.endswith(".tf") or low.endswith(".tfvars"):
        nt = redact_text(t, "")
    else:
        nt = redact_text(t, PLACEHOLDER)
    if contains_secret(nt):
        nt = redact_text(nt, PLACEHOLDER)
    NEW[path] = nt.encode()

# second pass: shell scripts etc. that were processed before python set VAR_OF are fine
# (var_for caches by value; python files are processed in path order, so re-run shell fixes)
for path in list(NEW):
    if NEW[path] is not None and path.lower().endswith((".sh", ".bash")):
        NEW[path] = fix_shell(path, text_of(FILES[path])).encode()

log("changes:")
for p, v in NEW.items():
    log("   ", p, "DELETE" if v is None else "edit")
log("vars:", VAR_OF)

# ----------------------------------------------------------------- history rewrite
def redact_bytes(data):
    t = text_of(data)
    if t is None:
        out = data
        for f in FORMS_SORTED:
            fb = f.encode()
            if fb in out:
                out = out.replace(fb, PLACEHOLDER.encode())
        return out
    return redact_text(t).encode()

BLOB_MAP = {}
for sha, p in BLOBS.items():
    data = BLOB_DATA[sha]
    t = text_of(data)
    if t is not None and not contains_secret(t) and not any(c in t for c in CARRIERS):
        continue
    if t is None and not any(f.encode() in data for f in FORMS_SORTED):
        continue
    if p in NEW and HEAD_SHAS.get(p) == sha and NEW[p] is not None:
        BLOB_MAP[sha.encode()] = NEW[p]
    else:
        BLOB_MAP[sha.encode()] = redact_bytes(data)

def msg_cb(msg):
    t = text_of(msg)
    if t is None:
        return msg
    if contains_secret(t):
        return redact_text(t).encode()
    return msg

def blob_cb(blob, _meta=None):
    nd = BLOB_MAP.get(blob.original_id)
    if nd is not None:
        blob.data = nd

def name_cb(name):
    t = text_of(name)
    if t and contains_secret(t):
        return redact_text(t, "redacted").encode()
    return name

if BLOB_MAP or any(contains_secret(m) for m in MESSAGES):
    import git_filter_repo as fr
    args = fr.FilteringOptions.parse_args(["--force", "--quiet", "--prune-empty", "never", "--prune-degenerate", "never"])
    filt = fr.RepoFilter(args, blob_callback=blob_cb, message_callback=msg_cb, filename_callback=name_cb, refname_callback=name_cb)
    filt.run()

# ----------------------------------------------------------------- apply working tree and commit
git("checkout", "-f", "HEAD", check=False)
for p, v in NEW.items():
    if v is None:
        if os.path.exists(p):
            git("rm", "-q", "--cached", "--", p, check=False)
            os.remove(p)
    else:
        with open(p, "wb") as f:
            f.write(v)
if IGNORE:
    gi = open(".gitignore").read() if os.path.exists(".gitignore") else ""
    add = [x for x in dict.fromkeys(IGNORE) if x not in gi.split("\n")]
    if add:
        if gi and not gi.endswith("\n"):
            gi += "\n"
        gi += "\n".join(add) + "\n"
        open(".gitignore", "w").write(gi)
git("add", "-A", check=False)
st = git("status", "--porcelain").decode()
if st.strip():
    git("-c", "user.name=Audit Fixture", "-c", "user.email=fixture@example.invalid",
        "commit", "-q", "-m", "Read secrets from the environment; drop committed credentials", check=False)

# ----------------------------------------------------------------- cleanup .git
import shutil
shutil.rmtree(".git/filter-repo", ignore_errors=True)
for f in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_MSG", "SQUASH_MSG"):
    try:
        os.remove(os.path.join(".git", f))
    except FileNotFoundError:
        pass
git("reflog", "expire", "--expire=now", "--all", check=False)
git("stash", "clear", check=False)
git("gc", "--prune=now", "--quiet", check=False)
git("prune", "--expire=now", check=False)

# verify
left = []
r = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], capture_output=True)
blob = r.stdout.decode(errors="replace")
for f in FORMS_SORTED:
    if f in blob:
        left.append(f[:20])
for p in git("ls-files").decode().splitlines():
    if os.path.isfile(p):
        t = text_of(open(p, "rb").read()) or ""
        if contains_secret(t):
            left.append(p)
log("left after:", left[:10])
PYEOF
cd "$WS/repo" && python3 "$TMPD/agent.py" "$WS/repo"
rc=$?
rm -rf "$TMPD"
exit $rc
