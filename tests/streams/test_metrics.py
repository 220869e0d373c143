"""The metrics endpoint never stops a worker: a taken port means no endpoint, not a crash."""

import socket

from citestream import metrics


def test_taken_metrics_port_is_reported_not_fatal(caplog):
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert metrics.serve(port) is False
    assert "runs without a /metrics endpoint" in caplog.text


def test_port_zero_disables_the_endpoint():
    assert metrics.serve(0) is False
