#!/usr/bin/env python3
"""Waits until a top-level X window with the given title is mapped (viewable) and prints the
time it was first seen so, in nanoseconds since the epoch. Polls every 2 ms through libX11
(ctypes, no extra package), which `xdotool search --sync` cannot (it sleeps half a second
between tries). Used by ui/e2e/bench-ui.mjs for the cold start of apps launched without
WebDriver (a WebDriver launch holds the page until its automation session is up).

    xwindow.py TITLE TIMEOUT_SECONDS
Exit 0 with the time on stdout; 1 on timeout; 2 without a display.
"""
import ctypes
import ctypes.util
import sys
import time

IS_VIEWABLE = 2


class XWindowAttributes(ctypes.Structure):
    _fields_ = [
        ("x", ctypes.c_int),
        ("y", ctypes.c_int),
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("border_width", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("visual", ctypes.c_void_p),
        ("root", ctypes.c_ulong),
        ("c_class", ctypes.c_int),
        ("bit_gravity", ctypes.c_int),
        ("win_gravity", ctypes.c_int),
        ("backing_store", ctypes.c_int),
        ("backing_planes", ctypes.c_ulong),
        ("backing_pixel", ctypes.c_ulong),
        ("save_under", ctypes.c_int),
        ("colormap", ctypes.c_ulong),
        ("map_installed", ctypes.c_int),
        ("map_state", ctypes.c_int),
        ("all_event_masks", ctypes.c_long),
        ("your_event_mask", ctypes.c_long),
        ("do_not_propagate_mask", ctypes.c_long),
        ("override_redirect", ctypes.c_int),
        ("screen", ctypes.c_void_p),
    ]


def main():
    title = sys.argv[1].encode()
    deadline = time.monotonic() + float(sys.argv[2])
    x = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XDefaultRootWindow.restype = ctypes.c_ulong
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XQueryTree.argtypes = [
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.POINTER(ctypes.c_ulong),
        ctypes.POINTER(ctypes.c_ulong),
        ctypes.POINTER(ctypes.POINTER(ctypes.c_ulong)),
        ctypes.POINTER(ctypes.c_uint),
    ]
    x.XFetchName.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_char_p)]
    x.XGetWindowAttributes.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(XWindowAttributes)]
    x.XFree.argtypes = [ctypes.c_void_p]
    # A window that goes away between listing and asking must not end the program.
    handler = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(lambda d, e: 0)
    x.XSetErrorHandler(handler)
    dpy = x.XOpenDisplay(None)
    if not dpy:
        print("no X display", file=sys.stderr)
        return 2
    root = x.XDefaultRootWindow(dpy)
    while time.monotonic() < deadline:
        r, p = ctypes.c_ulong(), ctypes.c_ulong()
        children = ctypes.POINTER(ctypes.c_ulong)()
        n = ctypes.c_uint()
        if x.XQueryTree(dpy, root, ctypes.byref(r), ctypes.byref(p), ctypes.byref(children), ctypes.byref(n)):
            for i in range(n.value):
                w = children[i]
                name = ctypes.c_char_p()
                if x.XFetchName(dpy, w, ctypes.byref(name)) and name.value is not None:
                    matched = name.value == title
                    x.XFree(name)
                    if matched:
                        attrs = XWindowAttributes()
                        if x.XGetWindowAttributes(dpy, w, ctypes.byref(attrs)) and attrs.map_state == IS_VIEWABLE:
                            print(time.time_ns())
                            return 0
            if children:
                x.XFree(children)
        time.sleep(0.002)
    print(f"no mapped window titled {sys.argv[1]!r}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
