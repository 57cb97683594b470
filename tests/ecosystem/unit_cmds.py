#!/usr/bin/env python3
"""Runs the commands of a systemd service unit the way systemd would, for
testing unit files where systemd is not the init (containers, CI).

    unit_cmds.py run  UNIT_FILE INSTANCE KEY [VAR=VALUE...]
    unit_cmds.py exec UNIT_FILE INSTANCE KEY [VAR=VALUE...]
    unit_cmds.py get  UNIT_FILE INSTANCE KEY

run: runs every command of KEY (ExecStartPre, ExecStartPost, ExecStop,
...) in order, stopping at the first failure unless the command has the
"-" prefix; exit status 0 or the failing command's. exec: replaces itself
with the single command of KEY (ExecStart; so the caller's $! is the
service's main process). get: prints the values of KEY, one per line,
with specifiers expanded (RuntimeDirectory=, ...).

As systemd does (core/load-fragment.c, config_parse_exec): the line is
split into words with quotes and C escapes, then specifiers are expanded
in each word (%i, %I, %f, %n, %p, %%), then at run time $$ becomes $,
${VAR} is replaced in a word and a lone $VAR word is split on white
space, with the variables of Environment= (VAR=VALUE arguments override
them). Sandboxing, users, timeouts and the like are not emulated.
"""
import os
import re
import subprocess
import sys


def cunescape_split(value):
    """systemd's extract_first_word with EXTRACT_QUOTES|EXTRACT_CUNESCAPE."""
    words, cur, i, inword, quote = [], [], 0, False, None
    esc = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "\\": "\\", '"': '"', "'": "'", "s": " "}
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            n = value[i + 1]
            if n == "x":
                cur.append(chr(int(value[i + 2:i + 4], 16)))
                i += 4
            elif n in esc:
                cur.append(esc[n])
                i += 2
            else:
                raise SystemExit("unsupported escape \\%s in %r" % (n, value))
            inword = True
            continue
        if quote:
            if c == quote:
                quote = None
            else:
                cur.append(c)
        elif c in "'\"":
            quote = c
            inword = True
        elif c.isspace():
            if inword:
                words.append("".join(cur))
                cur, inword = [], False
        else:
            cur.append(c)
            inword = True
        i += 1
    if quote:
        raise SystemExit("unterminated quote in %r" % value)
    if inword:
        words.append("".join(cur))
    return words


def unescape(instance, path):
    args = ["systemd-escape", "--unescape"] + (["--path"] if path else []) + ["--", instance]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.rstrip("\n")


def specifiers(word, unit_name, instance):
    prefix = unit_name.split("@", 1)[0]
    table = {
        "i": instance,
        "I": unescape(instance, False),
        "f": unescape(instance, True),
        "n": "%s@%s.%s" % (prefix, instance, unit_name.rsplit(".", 1)[1]),
        "p": prefix,
        "%": "%",
    }

    def rep(m):
        if m.group(1) not in table:
            raise SystemExit("specifier %%%s not emulated" % m.group(1))
        return table[m.group(1)]
    return re.sub(r"%(.)", rep, word)


def parse_unit(path):
    """{key: [raw values]} of the [Service] section (and the others)."""
    values, cont = {}, ""
    for raw in open(path):
        line = raw.rstrip("\n")
        if cont:
            line = cont + line
            cont = ""
        if line.endswith("\\"):
            cont = line[:-1] + " "
            continue
        s = line.strip()
        if not s or s[0] in "#;" or s.startswith("["):
            continue
        key, _, value = s.partition("=")
        values.setdefault(key.strip(), []).append(value.strip())
    return values


def environment(values, unit_name, instance, overrides):
    env = {}
    for v in values.get("Environment", []):
        for w in cunescape_split(v):
            k, _, val = w.partition("=")
            env[k] = specifiers(val, unit_name, instance)
    for o in overrides:
        k, _, val = o.partition("=")
        env[k] = val
    return env


def expand_env(argv, env):
    out = []
    for w in argv:
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", w)
        if m:
            out.extend(env.get(m.group(1), "").split())
            continue
        w = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), w)
        out.append(w.replace("$$", "$"))
    return out


def commands(values, key, unit_name, instance, env):
    cmds = []
    for v in values.get(key, []):
        words = cunescape_split(v)
        if not words:
            cmds = []  # an empty assignment resets the list
            continue
        first, ignore = words[0], False
        while first and first[0] in "-@+!:":
            ignore |= first[0] == "-"
            first = first[1:]
        argv = [specifiers(w, unit_name, instance) for w in [first] + words[1:]]
        if not argv[0].startswith("/"):
            raise SystemExit("%s: not an absolute path: %s" % (key, argv[0]))
        cmds.append((ignore, expand_env(argv, env)))
    return cmds


def main():
    mode, unit_file, instance, key = sys.argv[1:5]
    overrides = sys.argv[5:]
    unit_name = os.path.basename(unit_file)
    if "@." not in unit_name:
        raise SystemExit("not a template unit: " + unit_name)
    values = parse_unit(unit_file)
    if mode == "get":
        for v in values.get(key, []):
            for w in cunescape_split(v):
                print(specifiers(w, unit_name, instance))
        return 0
    env = environment(values, unit_name, instance, overrides)
    cmds = commands(values, key, unit_name, instance, env)
    if mode == "exec":
        if len(cmds) != 1:
            raise SystemExit("%s: %d commands, exec needs one" % (key, len(cmds)))
        argv = cmds[0][1]
        os.execve(argv[0], argv, dict(os.environ, **env))
    for ignore, argv in cmds:
        print("+ " + " ".join(argv), file=sys.stderr)
        rc = subprocess.run(argv, env=dict(os.environ, **env)).returncode
        if rc != 0 and not ignore:
            print("%s: %s exited with %d" % (key, argv[0], rc), file=sys.stderr)
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
