"""The MEMORISER_SCAN runtime program: the memoriser baseline's history scan, as filter-repo rules.

Run by the memoriser (`audit/memoriser/acting.py`) in the workspace's repository, as
`python3 -c <this text> SPEC` (SPEC: base64 of the JSON {"captures", "derive", "replaced"}):
prints, longest first, a `literal:VALUE==>REPLACED` rule for every match of the learned value
patterns in any blob, and for what the values derive (a base64 token's decoded credential, a
PEM block's long lines). Imports only the standard library.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import base64, binascii, json, re, subprocess, sys
spec = json.loads(base64.b64decode(sys.argv[1]))
patterns = [re.compile(p) for p in spec["captures"]]
listing = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"],
                         capture_output=True, text=True).stdout.split()
blobs = [listing[i] for i in range(0, len(listing) - 1, 2) if listing[i + 1] == "blob"]
data = subprocess.run(["git", "cat-file", "--batch"], input="".join(b + "\n" for b in blobs).encode(),
                      capture_output=True).stdout
found = set()
at = 0
while at < len(data):
    end = data.index(b"\n", at)
    size = int(data[at:end].split()[2])
    text = data[end + 1:end + 1 + size].decode("utf-8", "replace")
    at = end + 2 + size
    for pattern in patterns:
        found.update(m.group("value") for m in pattern.finditer(text))
derived = set()
for value in found:
    if "base64" in spec["derive"]:
        try:
            derived.add(base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode())
        except (binascii.Error, ValueError):
            pass
    if "lines" in spec["derive"]:
        derived.update(line for line in value.split("\n") if len(line) >= 16 and "-----" not in line)
for value in sorted((found | derived) - {""}, key=len, reverse=True):
    print("literal:" + value + "==>" + spec["replaced"])
