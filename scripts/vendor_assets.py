#!/usr/bin/env python3
"""Vendor the book's JavaScript so the built site works offline.

By default a Jupyter Book page loads MathJax, require.js and the Jupyter widget
manager from public CDNs. This script fetches pinned releases of those packages
from the npm registry with the machine's ``npm`` and copies only the files the
book needs into ``_static/vendor/`` (generated, ignored by git)::

    _static/vendor/
        manifest.json                    what was vendored (package, version, integrity)
        mathjax/                         MathJax 3 "es5" components: tex-mml-chtml.js and
                                         the input/output/ui/a11y/sre files it loads on demand,
                                         including output/chtml/fonts/woff-v2/*.woff
        requirejs/require.js             the AMD loader the widget manager needs
        html-manager/embed-amd.js        @jupyter-widgets/html-manager (bundles the base,
                                         controls and output widget modules) + its icon fonts
        plotly/plotly.min.js             plotly.js for the calculators, copied from the
                                         installed plotly Python package (no npm download),
                                         so it always matches the plotly that built them

``_config.yml`` points Sphinx and myst-nb at these files. Run it as ``make vendor``
(``make book`` does). It does nothing when the vendored copy already matches the
pins below, so repeated builds stay fast; it rebuilds the copy when a pin changes
or a file is missing.

The same module is also a small Sphinx extension (``_config.yml`` lists it under
``sphinx.local_extensions``). Jupyter Book adds *every* ``.js``/``.css`` file under
``_static/`` to *every* page; the extension removes the vendored files (and the
scripts that myst-nb loads only on pages with widgets) from that global list, and
stops the build with a clear message when the vendored copy is missing or stale. It
also leaves sphinx-thebe's scripts off the pages, since thebe (live code through Binder,
loaded from a CDN) is switched off in this book, drops the CDN stylesheet link that
matplotlib's JavaScript animations carry, and warns about any other notebook output that
would load from another host.

To upgrade a package, change its version and integrity in PACKAGES (``npm view
<name>@<version> dist.integrity``) and run ``make vendor``. A third-party widget library
(anything beyond ipywidgets' own base/controls/output) would be vendored as
``_static/vendor/<name>@<version>/dist/index.js``: that is where the widget manager
looks for it (see ``_static/jupyter-widgets-setup.js``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

__all__ = ["PACKAGES", "VENDOR_DIR", "PLOTLY_JS", "plotly_source", "vendor", "check", "setup"]

ROOT = Path(__file__).resolve().parent.parent
STATIC_DIR = ROOT / "_static"
VENDOR_DIR = STATIC_DIR / "vendor"
MANIFEST = "manifest.json"
# Bump when the layout below changes, so an old copy is rebuilt.
LAYOUT_VERSION = 1

# Exact pins, with the registry's sha512 integrity (`npm view <pkg>@<version> dist.integrity`).
# MathJax stays on 3.x: Sphinx's mathjax extension and myst-parser write MathJax 3
# configuration. html-manager 1.0.x is the embed manager for ipywidgets 8 (base 6,
# controls 5); embed-amd.js bundles @jupyter-widgets/base, controls and output.
PACKAGES = {
    "mathjax": {
        "version": "3.2.2",
        "integrity": "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",  # noqa: E501 (one token, as `npm view` prints it)
    },
    "requirejs": {
        "version": "2.3.8",
        "integrity": "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw==",  # noqa: E501 (one token, as `npm view` prints it)
    },
    "@jupyter-widgets/html-manager": {
        "version": "1.0.15",
        "integrity": "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",  # noqa: E501 (one token, as `npm view` prints it)
    },
}

# MathJax: the combined component Sphinx uses by default (TeX + MathML input, CommonHTML
# output, menu) and every directory it loads from at run time ([tex]/ extensions via
# autoload and \require, the a11y and speech components the menu can switch on, and the
# CommonHTML woff fonts). The other combined bundles (SVG output, node) are left out.
MATHJAX_FILES = ["es5/tex-mml-chtml.js", "es5/startup.js", "es5/core.js", "es5/loader.js"]
MATHJAX_DIRS = ["es5/input", "es5/output/chtml", "es5/ui", "es5/a11y", "es5/sre", "es5/adaptors"]
FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".eot", ".svg")

# Where plotly.js goes (relative to VENDOR_DIR); _static/calculators.js loads it from there.
PLOTLY_JS = "plotly/plotly.min.js"

# Files that must exist for the copy to count as complete (relative to VENDOR_DIR).
# _config.yml refers to the first three.
REQUIRED = [
    "mathjax/tex-mml-chtml.js",
    "requirejs/require.js",
    "html-manager/embed-amd.js",
    "mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
    "mathjax/input/tex/extensions/physics.js",
    "mathjax/a11y/assistive-mml.js",
]


class VendorError(RuntimeError):
    """The vendored assets could not be fetched or are incomplete."""


def _wanted_manifest() -> dict:
    return {
        "layout": LAYOUT_VERSION,
        "packages": {name: dict(pin) for name, pin in PACKAGES.items()},
    }


def plotly_source() -> tuple[Path, str]:
    """The plotly.js bundled with the installed plotly package, and that package's version."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise VendorError(
            "the plotly package is not installed (it is in pyproject's `course` "
            "extra: run `make setup`)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise VendorError(f"plotly is installed but {path} is missing")
    return path, importlib.metadata.version("plotly")


def _plotly_problems(have: dict, vendor_dir: Path) -> list[str]:
    try:
        _, version = plotly_source()
    except VendorError as exc:
        return [str(exc)]
    if have.get("plotly", {}).get("version") != version:
        return [f"plotly.js: vendored {have.get('plotly', {}).get('version')}, installed {version}"]
    if not (vendor_dir / PLOTLY_JS).is_file():
        return [f"{PLOTLY_JS} is missing"]
    return []


def _copy_plotly(vendor_dir: Path, log=print) -> dict:
    """Copy the installed plotly.js (and plotly's licence) into ``vendor_dir/plotly/``."""
    src, version = plotly_source()
    dst = vendor_dir / PLOTLY_JS
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    import importlib.metadata

    for f in importlib.metadata.files("plotly") or []:
        if PurePosixPath(str(f)).name.upper().startswith(("LICENSE", "LICENCE")):
            shutil.copy2(f.locate(), dst.parent / PurePosixPath(str(f)).name)
            break
    log(f"vendor: copied plotly.js of plotly {version} to {dst.relative_to(ROOT)}")
    return {"version": version}


def check(vendor_dir: Path = VENDOR_DIR) -> list[str]:
    """Return the reasons the vendored copy is missing or stale ([] when it is up to date)."""
    manifest_path = vendor_dir / MANIFEST
    if not manifest_path.is_file():
        return [f"{manifest_path.relative_to(ROOT)} is missing"]
    try:
        have = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{manifest_path.relative_to(ROOT)} is unreadable ({exc})"]
    problems = []
    want = _wanted_manifest()
    if have.get("layout") != want["layout"]:
        problems.append(f"layout {have.get('layout')} != {want['layout']}")
    have_pkgs = have.get("packages", {})
    for name, pin in want["packages"].items():
        got = have_pkgs.get(name, {})
        if got.get("version") != pin["version"] or got.get("integrity") != pin["integrity"]:
            problems.append(f"{name}: vendored {got.get('version')}, pinned {pin['version']}")
    for rel in REQUIRED + have.get("files", []):
        if not (vendor_dir / rel).is_file():
            problems.append(f"{rel} is missing")
            break
    return problems + _plotly_problems(have, vendor_dir)


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(
            "`npm` was not found on PATH. The book vendors MathJax, require.js and the "
            "Jupyter widget manager from the npm registry so that the site works offline; "
            "install Node.js with npm (on Debian: `apt-get install -y nodejs npm`) and run "
            "`make vendor` again."
        )
    return npm


def _sha512_integrity(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode("ascii")


def _fetch(npm: str, name: str, version: str, integrity: str, workdir: Path) -> Path:
    """`npm pack` one exact release, check its integrity, unpack it; return the package dir."""
    spec = f"{name}@{version}"
    cmd = [
        npm,
        "pack",
        spec,
        "--json",
        "--pack-destination",
        str(workdir),
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]
    try:
        result = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as exc:
        raise VendorError(f"`npm pack {spec}` timed out after {exc.timeout} s") from exc
    if result.returncode != 0:
        raise VendorError(
            f"`npm pack {spec}` failed (exit {result.returncode}); is the npm registry "
            f"reachable?\n{result.stderr.strip()}"
        )
    info = json.loads(result.stdout)[0]
    tarball = workdir / info["filename"]
    got = _sha512_integrity(tarball)
    if got != integrity:
        raise VendorError(
            f"{spec}: the tarball's integrity {got} does not match the pinned {integrity}; "
            "refusing to vendor it"
        )
    dest = workdir / name.replace("/", "__")
    dest.mkdir()
    with tarfile.open(tarball, "r:gz") as tar:
        members = []
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if (
                member.name.startswith("/")
                or ".." in parts
                or not (member.isfile() or member.isdir())
            ):
                raise VendorError(f"{spec}: unsafe path in tarball: {member.name!r}")
            members.append(member)
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: refuse links, devices, ...
            tar.extractall(dest, members=members, filter="data")
        else:
            tar.extractall(dest, members=members)
    package_dir = dest / "package"  # npm tarballs hold one top-level folder
    if not package_dir.is_dir():
        (package_dir,) = [p for p in dest.iterdir() if p.is_dir()]
    return package_dir


def _copy_file(src: Path, dst: Path, files: list[str], out: Path) -> None:
    if not src.is_file():
        raise VendorError(f"expected {src.name} in the package, it is not there ({src})")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    files.append(dst.relative_to(out).as_posix())


def _copy_tree(src: Path, dst: Path, files: list[str], out: Path) -> None:
    if not src.is_dir():
        raise VendorError(f"expected the folder {src.name} in the package ({src})")
    for path in sorted(src.rglob("*")):
        if path.is_file():
            _copy_file(path, dst / path.relative_to(src), files, out)


def _copy_licenses(pkg: Path, dst: Path, files: list[str], out: Path) -> None:
    for path in sorted(pkg.iterdir()):
        if path.is_file() and path.name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            _copy_file(path, dst / path.name, files, out)


def _layout(packages: dict[str, Path], out: Path) -> list[str]:
    """Copy the needed files of the unpacked packages into `out`; return them (relative)."""
    files: list[str] = []

    mathjax = packages["mathjax"]
    for rel in MATHJAX_FILES:
        _copy_file(
            mathjax / rel, out / "mathjax" / PurePosixPath(rel).relative_to("es5"), files, out
        )
    for rel in MATHJAX_DIRS:
        _copy_tree(
            mathjax / rel, out / "mathjax" / PurePosixPath(rel).relative_to("es5"), files, out
        )
    _copy_licenses(mathjax, out / "mathjax", files, out)

    requirejs = packages["requirejs"]
    _copy_file(requirejs / "require.js", out / "requirejs" / "require.js", files, out)
    _copy_licenses(requirejs, out / "requirejs", files, out)

    manager = packages["@jupyter-widgets/html-manager"]
    dist = manager / "dist"
    _copy_file(dist / "embed-amd.js", out / "html-manager" / "embed-amd.js", files, out)
    # The bundle's CSS refers to Font Awesome by hashed file names next to the script
    # (webpack public path); copy exactly the fonts it names.
    bundle = (dist / "embed-amd.js").read_text(encoding="utf-8")
    fonts = [p for p in sorted(dist.iterdir()) if p.suffix in FONT_SUFFIXES and p.name in bundle]
    if not fonts:
        raise VendorError("html-manager: no font files referenced by embed-amd.js were found")
    for font in fonts:
        _copy_file(font, out / "html-manager" / font.name, files, out)
    for path in sorted(dist.glob("*.LICENSE.txt")):
        _copy_file(path, out / "html-manager" / path.name, files, out)
    _copy_licenses(manager, out / "html-manager", files, out)
    return files


def vendor(force: bool = False, vendor_dir: Path = VENDOR_DIR, log=print) -> bool:
    """Make `vendor_dir` hold the pinned assets. Return True if it had to (re)build them."""
    problems = check(vendor_dir)
    if not problems and not force:
        pins = ", ".join(f"{name}@{pin['version']}" for name, pin in PACKAGES.items())
        log(f"vendor: {vendor_dir.relative_to(ROOT)} is up to date ({pins})")
        return False
    if problems:
        log("vendor: (re)building vendored assets: " + "; ".join(problems))
    manifest_path = vendor_dir / MANIFEST
    if not force and manifest_path.is_file() and all(p.startswith("plotly") for p in problems):
        # only plotly.js is stale: no need to fetch the npm packages again
        have = json.loads(manifest_path.read_text(encoding="utf-8"))
        have["plotly"] = _copy_plotly(vendor_dir, log)
        manifest_path.write_text(json.dumps(have, indent=2) + "\n", encoding="utf-8")
        return True
    npm = _npm()
    vendor_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vendor-npm-") as tmp:
        workdir = Path(tmp)
        unpacked = {}
        for name, pin in PACKAGES.items():
            log(f"vendor: npm pack {name}@{pin['version']}")
            unpacked[name] = _fetch(npm, name, pin["version"], pin["integrity"], workdir)
        # Assemble the copy aside, then move it in place with its manifest written last,
        # so an interrupted run never leaves a vendor folder that looks complete.
        staging = workdir / "vendor"
        files = _layout(unpacked, staging)
        if vendor_dir.exists():
            shutil.rmtree(vendor_dir)
        shutil.move(str(staging), str(vendor_dir))
        manifest = _wanted_manifest()
        manifest["files"] = files
        manifest["plotly"] = _copy_plotly(vendor_dir, log)
        (vendor_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = sum((vendor_dir / f).stat().st_size for f in files)
    log(f"vendor: wrote {len(files)} files ({size / 1e6:.1f} MB) to {vendor_dir.relative_to(ROOT)}")
    return True


# ---------------------------------------------------------------------------------------
# Sphinx extension (listed in _config.yml under sphinx.local_extensions)


def _is_local(path: str) -> bool:
    return bool(path) and "://" not in path and not path.startswith("//")


def _on_config_inited(app, config) -> None:
    from sphinx.errors import ConfigError

    problems = check()
    if problems:
        raise ConfigError(
            "the offline JavaScript assets in _static/vendor/ are missing or out of date ("
            + "; ".join(problems)
            + "). Run `make vendor` (or `make book`)."
        )
    # Every local asset the configuration names must exist under _static/.
    named = [config.mathjax_path] + list(getattr(config, "nb_ipywidgets_js", {}) or {})
    for path in named:
        if not _is_local(path):
            raise ConfigError(
                f"{path!r} would load from the network; the book must load its scripts from "
                "_static/ (see scripts/vendor_assets.py)"
            )
        if not (STATIC_DIR / path).is_file():
            raise ConfigError(f"_config.yml names _static/{path}, which does not exist")

    # Jupyter Book adds every .js/.css under _static/ to every page. Keep the vendored
    # files (loaded by MathJax, myst-nb or each other) and the widget-only scripts off
    # that global list.
    per_page = set(getattr(config, "nb_ipywidgets_js", {}) or {})

    def keep(entry) -> bool:
        name = entry if isinstance(entry, str) else entry[0]
        return not (name.startswith("vendor/") or name.startswith(".") or name in per_page)

    config.html_js_files = [e for e in config.html_js_files if keep(e)]
    config.html_css_files = [e for e in config.html_css_files if keep(e)]


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:
    """Leave out sphinx-thebe's scripts: thebe is off in this book (it needs Binder and
    would load its library from unpkg), so they would only carry a dead CDN address."""
    launch = app.config.html_theme_options.get("launch_buttons", {}) or {}
    if launch.get("thebe"):
        return
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = [
            js
            for js in scripts
            if not (
                str(getattr(js, "filename", "") or "").endswith("sphinx-thebe.js")
                or "THEBE_JS_URL" in (getattr(js, "attributes", {}) or {}).get("body", "")
            )
        ]
    styles = context.get("css_files")
    if isinstance(styles, list):
        styles[:] = [
            css
            for css in styles
            if not str(getattr(css, "filename", "") or "").endswith("sphinx-thebe.css")
        ]


# matplotlib's Animation.to_jshtml() links Font Awesome 4 from a CDN for its player
# buttons; the theme already ships Font Awesome (which knows the `fa fa-play` names), so
# the link is dropped rather than vendored.
_MPL_FONT_AWESOME = re.compile(
    r"""<link\s+rel=["']stylesheet["']\s+href=["']https?://maxcdn\.bootstrapcdn\.com/"""
    r"""font-awesome/[^"']*["']\s*/?>\s*""",
    re.IGNORECASE,
)
# Any other tag in an output that would make the browser fetch from another host.
_REMOTE_FETCH = re.compile(
    r"""<(script|link|img|iframe|source|video|audio|embed)\b[^>]*?\b(?:src|href|data)\s*=\s*"""
    r"""["']?((?:https?:)?//(?!(?:127\.0\.0\.1|localhost)[:/"'])[^"'\s>]+)""",
    re.IGNORECASE,
)


def _offline_outputs(app, doctree, docname) -> None:
    """Keep notebook HTML outputs offline: drop matplotlib's CDN stylesheet link, and warn
    (an error under -W) about any other output that loads from another host."""
    from docutils import nodes
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", "").split():
            continue
        text = node.astext()
        cleaned = _MPL_FONT_AWESOME.sub("", text)
        if cleaned != text:
            new = nodes.raw("", cleaned, format=node["format"])
            new.source, new.line = node.source, node.line
            node.replace_self(new)
            node = new
        for tag, url in _REMOTE_FETCH.findall(cleaned):
            logger.warning(
                "an HTML output loads <%s> %s from another host; the book must work "
                "offline (vendor the file under _static/, see scripts/vendor_assets.py)",
                tag,
                url,
                location=node,
                type="offline",
                subtype="remote",
            )


def setup(app):
    app.connect("config-inited", _on_config_inited)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("doctree-resolved", _offline_outputs)
    return {"version": str(LAYOUT_VERSION), "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--check",
        action="store_true",
        help="only report whether the vendored copy is up to date (exit 1 if not)",
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = check()
            for problem in problems:
                print(f"vendor: {problem}", file=sys.stderr)
            return 1 if problems else 0
        vendor(force=args.force)
    except VendorError as exc:
        print(f"vendor: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
