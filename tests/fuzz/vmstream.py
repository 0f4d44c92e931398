"""QEMU's migration stream, as far as a device's section goes: find a
device's section in a stream, parse its body into fields and subsections
by the layout QEMU itself describes (the JSON "vmdesc" at the end of a
migration stream), and write it back.

A section body is the device's fields, then its subsections, each
QEMU_VM_SUBSECTION, the name (a length byte and the bytes), a big-endian
version and the subsection's own body; a struct field holds a body of its
own (fields, then the struct's subsections).  Nothing in a body gives a
length: only the layout says where a field ends.
"""
import json
import struct

SECTION_FULL = 0x04
SUBSECTION = 0x05
VMDESCRIPTION = 0x06
FOOTER = 0x7e
EOF = 0x1f


class Node:
    """A parsed body: fields [(name, bytes or Node)] and subsections
    [Sub]."""

    def __init__(self, fields, subs):
        self.fields, self.subs = fields, subs

    def encode(self):
        out = b"".join(v.encode() if isinstance(v, Node) else v
                       for _, v in self.fields)
        return out + b"".join(s.encode() for s in self.subs)

    def leaves(self):
        """(node, index) of every plain field, recursively."""
        for i, (name, v) in enumerate(self.fields):
            if isinstance(v, Node):
                yield from v.leaves()
            else:
                yield self, i
        for s in self.subs:
            yield from s.body.leaves()

    def all_subs(self):
        """(owner node, index) of every subsection, recursively."""
        for name, v in self.fields:
            if isinstance(v, Node):
                yield from v.all_subs()
        for i, s in enumerate(self.subs):
            yield self, i
            yield from s.body.all_subs()


class Sub:
    def __init__(self, name, version, body, raw_name=None):
        self.name, self.version, self.body = name, version, body
        self.raw_name = raw_name

    def encode(self):
        name = self.raw_name if self.raw_name is not None else \
            self.name.encode()
        return (bytes([SUBSECTION, len(name) & 0xff]) + name +
                struct.pack(">I", self.version & 0xffffffff) +
                self.body.encode())


def vmdesc(stream):
    """The JSON layout QEMU appends to a migration stream (not to a
    device-state save), or None.  QEMU 10.0 opens it with the
    configuration section, 7.2 with the page size."""
    at = max(stream.rfind(b'{"configuration"'), stream.rfind(b'{"page_size"'))
    if at < 0:
        return None
    end = stream.find(b"\0", at)
    return json.loads(stream[at:end if end > 0 else None])


def device_desc(desc, name):
    for d in desc["devices"]:
        if d["name"] == name:
            return d
    raise KeyError(name)


def catalog(layout, out=None):
    """Every subsection layout in a device's description, by name."""
    out = {} if out is None else out
    for f in layout.get("fields", []):
        if f.get("type") == "struct":
            catalog(f["struct"], out)
    for s in layout.get("subsections", []):
        out.setdefault(s["vmsd_name"], s)
        catalog(s, out)
    return out


def parse(layout, buf, off, subs_by_name):
    """Parse a body at buf[off:] by layout; returns (Node, end)."""
    fields = []
    for f in layout.get("fields", []):
        n = f.get("array_len", 1)
        if f.get("type") == "struct":
            for _ in range(n):
                node, off = parse(f["struct"], buf, off, subs_by_name)
                fields.append((f["name"], node))
            continue
        size = f["size"] * n
        if off + size > len(buf):
            raise ValueError("body ends inside %s" % f["name"])
        fields.append((f["name"], buf[off:off + size]))
        off += size
    subs = []
    while off < len(buf) and buf[off] == SUBSECTION:
        ln = buf[off + 1]
        name = buf[off + 2:off + 2 + ln].decode()
        if name not in subs_by_name:
            break           # not one of ours: the caller's footer or next
        version = struct.unpack(">I", buf[off + 2 + ln:off + 6 + ln])[0]
        node, off = parse(subs_by_name[name], buf, off + 6 + ln,
                          subs_by_name)
        subs.append(Sub(name, version, node))
    return Node(fields, subs), off


def find_section(stream, idstr):
    """(body start, section id) of idstr's full section in a stream."""
    key = bytes([len(idstr)]) + idstr.encode()
    at = 0
    while True:
        at = stream.find(key, at + 1)
        if at < 0:
            raise KeyError(idstr)
        if at >= 5 and stream[at - 5] == SECTION_FULL:
            sid = stream[at - 4:at]
            return at + len(key) + 8, sid


def split(stream, idstr, layout, subs_by_name):
    """(prefix, Node, suffix) with prefix + body + suffix == stream; the
    suffix starts with the section's footer."""
    start, sid = find_section(stream, idstr)
    node, end = parse(layout, stream, start, subs_by_name)
    if stream[end:end + 5] != bytes([FOOTER]) + sid:
        raise ValueError("%s: the layout does not end at the footer" % idstr)
    return stream[:start], node, stream[end:]
