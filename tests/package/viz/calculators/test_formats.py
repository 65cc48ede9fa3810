"""collectives.viz.calculators.formats: the numbers a calculator prints (the same rules as
_static/calculators.js); every expected string worked out by hand."""

from collectives.viz import calculators as vi


def test_formats():
    assert vi.format_seconds(81.6432e-6) == "81.6 µs"
    assert vi.format_seconds(0.0123456) == "12.3 ms"
    assert vi.format_seconds(2.5) == "2.50 s"
    assert vi.format_seconds(999.6e-9) == "1000 ns"
    assert vi.format_seconds(float("nan")) == "n/a"
    assert vi.format_bytes(2**20) == "1 MiB" and vi.format_bytes(3 * 2**29) == "1.5 GiB"
    assert vi.format_rate(39.2528e9) == "39.3 GB/s" and vi.format_rate(1234e9) == "1234 GB/s"
