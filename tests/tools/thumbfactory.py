#!/usr/bin/python3
"""Thumbnails made the way Nautilus 43 makes them: GNOME's thumbnail
factory (GnomeDesktop 4.0, libgnome-desktop-4, the library Nautilus 43
links), which runs the thumbnailer of the file's type in a bubblewrap
sandbox and keeps the result in the freedesktop.org thumbnail cache
($XDG_CACHE_HOME/thumbnails) under the file's URI and mtime.

  thumbfactory.py SIZE PATH...    SIZE: normal (128) or large (256)

For each PATH, as Nautilus does: the content type and mtime from GIO;
a thumbnail in the cache for that URI and mtime is used as it is
("cached"), else, if the factory can thumbnail the type, one is made and
saved ("made"). One line per PATH: "cached|made CONTENT_TYPE THUMBNAIL".
Exit status 1 (and a line on stderr) when one cannot be made.
Run with G_MESSAGES_DEBUG=all to see the sandbox's command line.
"""
import sys

import gi

gi.require_version("GnomeDesktop", "4.0")
from gi.repository import Gio, GnomeDesktop  # noqa: E402

SIZES = {
    "normal": GnomeDesktop.DesktopThumbnailSize.NORMAL,
    "large": GnomeDesktop.DesktopThumbnailSize.LARGE,
}


def thumbnail(factory, path):
    f = Gio.File.new_for_path(path)
    info = f.query_info("standard::content-type,time::modified", Gio.FileQueryInfoFlags.NONE, None)
    uri, mime = f.get_uri(), info.get_content_type()
    mtime = info.get_attribute_uint64("time::modified")
    cached = factory.lookup(uri, mtime)
    if cached:
        return "cached %s %s" % (mime, cached)
    if not factory.can_thumbnail(uri, mime, mtime):
        raise RuntimeError("the factory cannot thumbnail %s (%s)" % (path, mime))
    pixbuf = factory.generate_thumbnail(uri, mime, None)
    factory.save_thumbnail(pixbuf, uri, mtime, None)
    made = factory.lookup(uri, mtime)
    if not made:
        raise RuntimeError("no thumbnail of %s in the cache after saving it" % path)
    return "made %s %s" % (mime, made)


def main():
    factory = GnomeDesktop.DesktopThumbnailFactory.new(SIZES[sys.argv[1]])
    for path in sys.argv[2:]:
        try:
            print(thumbnail(factory, path), flush=True)
        except Exception as e:  # GLib.Error or the above: say which file
            sys.exit("thumbfactory: %s: %s" % (path, e))


main()
