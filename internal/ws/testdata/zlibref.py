# Compresses messages as the browsers do with C zlib (libz through ctypes):
# deflateInit2(level 6, raw, -wbits, memLevel 8, default strategy), each
# message deflate(Z_SYNC_FLUSH) with the 00 00 ff ff tail cut, and
# deflateReset between messages without context takeover. With "chunk" > 0
# a message goes in as Chromium's WebSocketDeflater gives it: pieces of
# that many bytes under Z_NO_FLUSH, then Z_SYNC_FLUSH with no input;
# otherwise in one deflate(Z_SYNC_FLUSH) call, as Firefox's.
# stdin: JSON {"wbits": n, "takeover": bool, "chunk": n, "messages": [hex, ...]}
# stdout: JSON [hex, ...]
import ctypes, ctypes.util, json, sys

z = ctypes.CDLL(ctypes.util.find_library("z") or "libz.so.1")

class ZStream(ctypes.Structure):
    _fields_ = [("next_in", ctypes.c_void_p), ("avail_in", ctypes.c_uint), ("total_in", ctypes.c_ulong),
                ("next_out", ctypes.c_void_p), ("avail_out", ctypes.c_uint), ("total_out", ctypes.c_ulong),
                ("msg", ctypes.c_char_p), ("state", ctypes.c_void_p),
                ("zalloc", ctypes.c_void_p), ("zfree", ctypes.c_void_p), ("opaque", ctypes.c_void_p),
                ("data_type", ctypes.c_int), ("adler", ctypes.c_ulong), ("reserved", ctypes.c_ulong)]

req = json.load(sys.stdin)
s = ZStream()
version = z.zlibVersion
version.restype = ctypes.c_char_p
if z.deflateInit2_(ctypes.byref(s), 6, 8, -req["wbits"], 8, 0, version(), ctypes.sizeof(s)) != 0:
    sys.exit("deflateInit2 failed")
out = []
buf = ctypes.create_string_buffer(4096)
for i, m in enumerate(req["messages"]):
    if i > 0 and not req["takeover"]:
        z.deflateReset(ctypes.byref(s))
    data = bytes.fromhex(m)
    chunk = req.get("chunk", 0)
    pieces = [(data, 2)]  # Z_SYNC_FLUSH
    if chunk > 0:
        pieces = [(data[i:i + chunk], 0) for i in range(0, len(data), chunk)] + [(b"", 2)]
    res = []
    for piece, flush in pieces:
        src = ctypes.create_string_buffer(piece, len(piece))
        s.next_in = ctypes.cast(src, ctypes.c_void_p)
        s.avail_in = len(piece)
        while True:
            s.next_out = ctypes.cast(buf, ctypes.c_void_p)
            s.avail_out = 4096
            r = z.deflate(ctypes.byref(s), flush)
            if r not in (0, -5):  # Z_OK, Z_BUF_ERROR (nothing left to do)
                sys.exit("deflate: %d" % r)
            n = 4096 - s.avail_out
            res.append(buf.raw[:n])
            if s.avail_in == 0 and n < 4096:
                break
    res = b"".join(res)
    assert res.endswith(b"\x00\x00\xff\xff"), res.hex()
    out.append(res[:-4].hex())
json.dump(out, sys.stdout)
