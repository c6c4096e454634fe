"""The parts bin's settings modules: a Python settings module in one of the idioms (`IDIOMS`).

`SettingsIdioms` is a part of `parts.Builder` (a mixin: its methods use the builder's draw,
project, slots and tests): `settings_module` writes the settings of a component as module
constants, a settings class, a dataclass, a factory or a function's local, or as an INI, TOML or
JSON file read by a loader that overlays the documented environment variables, with a test that
the settings keep their values.
"""

from __future__ import annotations

from redaction_pressure.audit.plan import Decoy, Probe, Slot
from redaction_pressure.audit.scenarios.project import FILE_IDIOMS, Setting, camel


class SettingsIdioms:
    """The settings-module part of `parts.Builder`."""

    def setting(
        self, comp: str, name: str, idiom: str, kind: str, value: str, tier: str = "surface", wrap: str = "{}", **extra
    ) -> Setting:
        """A secret setting named by the convention: `<PREFIX><NAME>`, or `<PREFIX><SECTION>_<KEY>` in a config file."""
        env = self.var(comp, name) if idiom in FILE_IDIOMS else self.var(name)
        return Setting(name, secret=self.secret(kind, value, env, tier=tier, **extra), wrap=wrap)

    def settings_module(self, comp: str, settings: list[Setting], idiom: str, extra=None, message: str = "") -> str:
        """Write one settings module (and its config file for the file idioms); add its probe,
        its test (keys and every literal value, decoys included) and its commit unit.

        `extra(get)` may return (code, [(probe id, call)], test text) to append: `get(name)` is the
        expression reading setting `name` in this idiom. Returns the path of the file holding the values
        (the module, or its config file)."""
        d = self.d
        fn = self.fresh(((comp, "settings"), ("load", comp), (comp, "options"), ("get", comp, "config")))
        path = self.project.module(self.fresh(((comp,), (comp, "config"), (comp, "settings"), ("settings", comp))))
        files: dict[str, str | None] = {}
        doc = f'"""Settings of the {comp} integration."""\n\n'
        keys = [s.name for s in settings]
        where = path
        if idiom in FILE_IDIOMS:
            text, where = self._file_idiom(comp, settings, idiom, fn, path)
            files[where] = text[1]
            text = doc + text[0]
        else:
            text = doc + self._code_idiom(comp, settings, idiom, fn)
        self.decoys += [Decoy(s.decoy, s.value, where) for s in settings if s.decoy]
        if extra is not None:

            def get(name: str) -> str:
                return f"{fn}()['{comp}']['{name}']" if idiom in FILE_IDIOMS else f"{fn}()['{name}']"

            code, probes, test = extra(get)
            text += code
            self.probes += [Probe(pid, "py", path, call) for pid, call in probes]
            self.tests.append(test.replace("@MODULE@", path))
        files[path] = text
        self.add(
            message
            or d.pick(
                (f"Add the {comp} settings", f"Configure {comp}", f"Wire up {comp}", f"{comp}: connection settings")
            ),
            files,
        )
        self.probes.append(Probe(f"{comp}_{idiom}", "py", path, f"{fn}()"))
        literal = {s.name: s.value for s in settings if s.secret is None}
        self.test(f'''
def test_{fn}_keeps_its_settings():
    settings = load("{path}").{fn}()
    flat = {{k: v for part in settings.values() for k, v in part.items()}} if all(isinstance(v, dict) for v in settings.values()) else settings
    assert sorted(flat) == {sorted(keys)!r}
    for name, value in {literal!r}.items():
        assert flat[name] == value
''')
        return where

    def _code_idiom(self, comp: str, settings: list[Setting], idiom: str, fn: str) -> str:
        def value(s: Setting) -> str:
            return self.py_slot(s.secret, s.wrap) if s.secret else repr(s.value)

        imports = "«imports»" if any(s.secret for s in settings) else ""
        self._imports_slot(settings)
        if idiom == "constants":
            body = "".join(f"{s.name.upper()} = {value(s)}\n" for s in settings)
            ret = ", ".join(f'"{s.name}": {s.name.upper()}' for s in settings)
            return f"{imports}{body}\n\ndef {fn}():\n    return {{{ret}}}\n"
        if idiom == "settings_class":
            cls = camel(comp) + "Settings"
            body = "".join(f"    {s.name} = {value(s)}\n" for s in settings)
            names = tuple(s.name for s in settings)
            return (f"{imports}\nclass {cls}:\n{body}\n    def as_dict(self):\n        return {{name: getattr(self, name) for name in {names!r}}}\n\n\n"
                    f"def {fn}():\n    return {cls}().as_dict()\n")  # fmt: skip
        if idiom == "dataclass":
            cls = camel(comp) + "Config"
            body = "".join(f"    {s.name}: str = {value(s)}\n" for s in settings)
            return f"{imports}from dataclasses import asdict, dataclass\n\n\n@dataclass(frozen=True)\nclass {cls}:\n{body}\n\ndef {fn}():\n    return asdict({cls}())\n"
        if idiom == "factory":
            body = "".join(f'        "{s.name}": {value(s)},\n' for s in settings)
            return f"{imports}\ndef {fn}():\n    return {{\n{body}    }}\n"
        body = "".join(f"    {s.name} = {value(s)}\n" for s in settings)
        ret = ", ".join(f'"{s.name}": {s.name}' for s in settings)
        return f"{imports}\ndef {fn}():\n{body}    return {{{ret}}}\n"

    def _imports_slot(self, settings: list[Setting]) -> None:
        sec = next(s.secret for s in settings if s.secret)
        self.slots.setdefault("imports", Slot(sec.id, "", "import os\n\n"))

    def _file_idiom(
        self, comp: str, settings: list[Setting], idiom: str, fn: str, path: str
    ) -> tuple[tuple[str, str], str]:
        depth = path.count("/")
        folder = self.d.pick(("config", "conf", "etc", "settings"))
        ext = {"ini": "ini", "toml": "toml", "json": "json"}[idiom]
        conf = f"{folder}/{comp}.{ext}"
        section = comp
        lines = []
        for s in settings:
            if idiom == "ini":
                lines.append(f"{s.name} = " + (self.slot(s.secret, s.wrap, "") if s.secret else s.value))
            elif idiom == "toml":
                lines.append(
                    f"{s.name} = " + (self.slot(s.secret, f'"{s.wrap}"', '""') if s.secret else f'"{s.value}"')
                )
            else:
                lines.append(
                    f'    "{s.name}": ' + (self.slot(s.secret, f'"{s.wrap}"', '""') if s.secret else f'"{s.value}"')
                )
        if idiom == "json":
            text = '{\n  "' + section + '": {\n' + ",\n".join(lines) + "\n  }\n}\n"
        else:
            text = f"[{section}]\n" + "\n".join(lines) + "\n"
        reader = {
            "ini": ("import configparser\n", "    parser = configparser.ConfigParser(interpolation=None)\n    parser.read_string(CONFIG.read_text())\n"
                    "    data = {name: dict(parser[name]) for name in parser.sections()}\n"),
            "toml": ("import tomllib\n", "    data = tomllib.loads(CONFIG.read_text())\n"),
            "json": ("import json\n", "    data = json.loads(CONFIG.read_text())\n"),
        }[idiom]  # fmt: skip
        overlay_name = f"overlay_{comp}"
        self.slots[overlay_name] = Slot(
            next(s.secret for s in settings if s.secret).id,
            "",
            "\n    # Every setting can come from the environment: PREFIX + SECTION_KEY.\n"
            "    for section, entries in data.items():\n        for key in entries:\n"
            f'            entries[key] = os.environ.get(f"{self.project.prefix}{{section}}_{{key}}".upper(), entries[key])\n',
        )
        self.slots.setdefault(f"imports_{comp}", Slot(self.slots[overlay_name].secret, "", "import os\n"))
        module = (
            f'import pathlib\n«imports_{comp}»{reader[0]}\nCONFIG = pathlib.Path(__file__).resolve().parents[{depth}] / "{conf}"\n\n\n'
            f"def {fn}():\n{reader[1]}«{overlay_name}»    return data\n"
        )
        return (module, text), conf
