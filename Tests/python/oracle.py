#!/usr/bin/env python3
"""Independent oracle for TwoBits' parsers (run by Tests/AppleDeviceCheckClientTests/OracleTests.swift).

Reads DIR/cases.txt, one case a line: KIND <b64 input> <swift verdict> <b64 payload>, where the verdict
is "ok" or "refuse", and checks each against Python's own json, base64 and datetime:

  json    strict UTF-8, json.loads with duplicate keys refused (object_pairs_hook; keys compared after
          NFD normalisation, as Swift strings compare) and NaN/Infinity refused (parse_constant); Swift's
          serialisation must parse to the same value. Mapped explicitly: lone surrogate escapes (Python
          accepts them; TwoBits refuses), numbers that overflow a double (Python gives inf or a huge
          int; TwoBits refuses), depth > 32 or more than 4,096 values (TwoBits' limits).
  b64     base64.urlsafe_b64decode after adding the padding. Mapped: '=' or any byte outside the
          url-safe alphabet (Python pads or skips them; TwoBits refuses), a last character with
          non-zero unused bits (Python ignores them; TwoBits refuses).
  month   "YYYY-MM": ASCII digits, datetime.strptime, year 1970-9999.
  stamp   unix seconds -> datetime.fromtimestamp(t, UTC).strftime("%Y-%m").
  query   Apple's 200 answer to a query: "Failed to find bit state" / "Bit State Not Found" (trimmed)
          is never-set; otherwise a JSON object with bit0 and bit1 JSON booleans and a valid
          last_update_time month.

Prints one line per disagreement and a summary; exits 1 on any disagreement.
"""
import base64, binascii, datetime, json, math, re, sys, unicodedata

MAX_DEPTH, MAX_VALUES = 32, 4096
INT64 = (-2**63, 2**63 - 1)

class Refused(Exception):
    pass

def pairs(items):
    out, seen = {}, set()
    for k, v in items:
        n = unicodedata.normalize("NFD", k)
        if n in seen:
            raise Refused("duplicate key %r" % k)
        seen.add(n)
        out[k] = v
    return out

def constant(name):
    raise Refused("constant " + name)

def has_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)

def normalise(v, depth=0, count=None):
    """Python's value in TwoBits' terms: ints outside Int64 become floats; inf, surrogates and limits refuse."""
    count[0] += 1
    if count[0] > MAX_VALUES:
        raise Refused("more than %d values" % MAX_VALUES)
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        if INT64[0] <= v <= INT64[1]:
            return v
        try:
            f = float(v)
        except OverflowError:
            raise Refused("integer overflows a double")
        return f
    if isinstance(v, float):
        if not math.isfinite(v):
            raise Refused("number overflows a double")
        return v
    if isinstance(v, str):
        if has_surrogate(v):
            raise Refused("lone surrogate")
        return v
    if depth + 1 > MAX_DEPTH:
        raise Refused("deeper than %d" % MAX_DEPTH)
    if isinstance(v, list):
        return [normalise(x, depth + 1, count) for x in v]
    out = {}
    for k, x in v.items():
        if has_surrogate(k):
            raise Refused("lone surrogate")
        out[k] = normalise(x, depth + 1, count)
    return out

def parse_json(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("invalid UTF-8")
    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except (ValueError, RecursionError) as e:
        raise Refused(str(e)[:60])
    return normalise(value, 0, [0])

def same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b

B64URL = re.compile(rb"[A-Za-z0-9_-]*")

def check_b64(data):
    if not B64URL.fullmatch(data):
        return ("refuse", None, "outside-alphabet")
    padded = data + b"=" * (-len(data) % 4)
    try:
        decoded = base64.urlsafe_b64decode(padded)
    except (binascii.Error, ValueError):
        return ("refuse", None, None)
    if base64.urlsafe_b64encode(decoded) != padded:
        return ("refuse", None, "non-canonical")
    return ("ok", decoded, None)

MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")

def parse_month(text):
    if not MONTH.fullmatch(text):
        raise Refused("not YYYY-MM")
    try:
        d = datetime.datetime.strptime(text, "%Y-%m")
    except ValueError:
        raise Refused("no such month")
    if not 1970 <= d.year <= 9999:
        raise Refused("year out of range")
    return "%04d-%02d" % (d.year, d.month)

def check_query(data):
    text = data.strip(b" \n\r\t")
    if text in (b"Failed to find bit state", b"Bit State Not Found"):
        return "never"
    value = parse_json(data)
    if not isinstance(value, dict):
        raise Refused("not an object")
    b0, b1, month = value.get("bit0"), value.get("bit1"), value.get("last_update_time")
    if type(b0) is not bool or type(b1) is not bool or not isinstance(month, str):
        raise Refused("bits or month missing or mistyped")
    return "%d,%d,%s" % (b0, b1, parse_month(month))

def main():
    directory = sys.argv[1]
    total = agreed = 0
    mapped = {}
    problems = []
    for number, line in enumerate(open(directory + "/cases.txt", encoding="ascii")):
        kind, raw, verdict, payload = line.split()
        data = base64.b64decode(raw)
        theirs = base64.b64decode(payload)
        total += 1
        expected, value, note = "refuse", None, None
        try:
            if kind == "json":
                try:
                    json.loads(data.decode("utf-8", "strict"), object_pairs_hook=pairs, parse_constant=constant)
                    plain = True
                except Exception:
                    plain = False
                value = parse_json(data)
                expected = "ok"
            elif kind == "b64":
                expected, value, note = check_b64(data)
            elif kind == "month":
                value, expected = parse_month(data.decode("utf-8", "replace")).encode(), "ok"
            elif kind == "stamp":
                t = int(data)
                value = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m").encode()
                expected = "ok"
            elif kind == "query":
                value, expected = check_query(data).encode(), "ok"
            else:
                raise SystemExit("unknown kind " + kind)
        except Refused as e:
            expected = "refuse"
            if kind == "json" and plain:
                note = "mapped: " + str(e)
        if note:
            mapped[note] = mapped.get(note, 0) + 1
        ok = expected == verdict
        if ok and expected == "ok":
            if kind == "json":
                try:
                    ok = same(value, parse_json(theirs))
                except Refused as e:
                    ok = False
            else:
                ok = value == theirs
        if ok:
            agreed += 1
        else:
            problems.append("case %d (%s): input %r: python %s %r, twobits %s %r"
                            % (number, kind, data[:120], expected, value if not isinstance(value, (dict, list)) else "...", verdict, theirs[:120]))
    for p in problems[:40]:
        print(p)
    print("agreed on %d of %d cases; documented differences: %s" % (agreed, total,
          ", ".join("%s %d" % kv for kv in sorted(mapped.items())) or "none"))
    sys.exit(0 if agreed == total else 1)

if __name__ == "__main__":
    main()
