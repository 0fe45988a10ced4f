"""The deployment files under deploy/ hold together, and keep the promises they make.

Compose, Prometheus, Grafana and Kubernetes are checked offline: the files
parse, every path and port they point at exists, every metric they query is
one syncd exports, promtool accepts the Prometheus config and passes the
alert rules' unit tests, and the Kubernetes manifests validate against the
schemas bundled in the ``kubernetes-validate`` package.  The promtool tests
skip with a reason when promtool is missing, unless
SYNCD_TEST_REQUIRE_PROMETHEUS=1 (set by .ci/run) turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml

from syncd import metrics
from syncd.config import Settings, load_settings
from syncd.domain.signing import signing_key
from syncd.web.ops import Readiness
from syncd.web.server import HttpServer
from tests.helpers import ROOT

DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
PROMETHEUS = DEPLOY / "prometheus"
PROMETHEUS_CONFIG = PROMETHEUS / "prometheus.yml"
ALERTS = PROMETHEUS / "alerts.yml"
ALERT_TESTS = PROMETHEUS / "alerts.test.yml"
GRAFANA = DEPLOY / "grafana"
DATASOURCES = GRAFANA / "provisioning" / "datasources" / "prometheus.yaml"
DASHBOARD_PROVIDERS = GRAFANA / "provisioning" / "dashboards" / "syncd.yaml"
DASHBOARD = GRAFANA / "dashboards" / "syncd.json"
K8S = DEPLOY / "k8s"

SERVICES = {"syncd", "postgres", "prometheus", "grafana"}
ALERT_NAMES = {
    "SyncdDown",
    "SyncdNoSuccessfulCycle",
    "SyncdUpstreamErrors",
    "SyncdDeliveriesDeadLettered",
    "SyncdOutboxGrowing",
    "SyncdPublicationLookupsFailing",
}
# What the task asks the dashboard to show, by panel title.
DASHBOARD_PANELS = {
    "Last successful sync",
    "Sync health",
    "Sync cycles",
    "Upstream requests by status",
    "Upstream error ratio",
    "Changes by kind",
    "Webhook deliveries by outcome",
    "Webhook delivery latency",
    "Outbox depth",
}
# Series Prometheus itself writes for every target, not exported by syncd.
PROMETHEUS_SERIES = {"up"}
# Grafana's interval variables, as promtool should see them.
GRAFANA_VARIABLES = {"$__interval": "5m", "$__rate_interval": "5m", "$__range": "24h"}
# Kubernetes versions to validate against: an older one still in wide use, and
# the newest the installed kubernetes-validate bundles.
K8S_VERSIONS = ("1.28", kubernetes_validate.utils.latest_version())
HEALTH_PATHS = {"/healthz", "/readyz", "/metrics"}

_PROMQL_KEYWORDS = {
    "and",
    "or",
    "unless",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "bool",
    "inf",
    "nan",
}


# -- helpers -------------------------------------------------------------------


def _yaml(path: Path) -> Any:
    """One YAML document from ``path``."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _promtool() -> str:
    """The promtool binary; skips (or fails under CI) when it is missing."""
    for candidate in ("/usr/bin/promtool", shutil.which("promtool")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    reason = "promtool is not installed (Debian: apt-get install prometheus; .ci/run installs it)"
    if os.environ.get("SYNCD_TEST_REQUIRE_PROMETHEUS") == "1":
        pytest.fail(f"SYNCD_TEST_REQUIRE_PROMETHEUS=1 but {reason}")
    pytest.skip(reason)


def _run_promtool(*args: str | Path, cwd: Path) -> str:
    """Run promtool with ``args`` in ``cwd``; fail the test with its output unless it succeeds."""
    result = subprocess.run(
        [_promtool(), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"promtool {' '.join(map(str, args))} failed:\n{output}"
    return output


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (function and keyword names left out)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges and subqueries
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = re.findall(r"(?<![\w.$])([A-Za-z_:][\w:]*)\b(?!\s*\()", text)
    return {n for n in names if n.lower() not in _PROMQL_KEYWORDS}


@pytest.fixture(scope="module")
def exported_names() -> set[str]:
    """Every sample name syncd.metrics.REGISTRY exposes, the database-backed gauges included."""
    collector = None
    # The store gauges appear once a store collector is registered (the daemon
    # does it); borrow one unless a test left one registered.
    with contextlib.suppress(ValueError):
        collector = metrics.register_store_collector(
            # With [publications] on, as its alert assumes.
            lambda: metrics.StoreSnapshot(
                {}, outbox_pending=0, outbox_dead=0, publications={"failing": 0}
            )
        )
    try:
        return {s.name for family in metrics.REGISTRY.collect() for s in family.samples}
    finally:
        if collector is not None:
            metrics.unregister_store_collector(collector)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """deploy/compose.yaml, parsed."""
    data = _yaml(COMPOSE)
    assert isinstance(data, dict)
    return data


def _interpolate(value: str) -> str:
    """A compose value with ``${VAR:-default}`` replaced by its default, as with no .env file."""
    return re.sub(r"\$\{(\w+)(?::?-([^}]*))?\}", lambda m: m.group(2) or "", value)


def _binds(service: dict[str, Any]) -> list[tuple[Path, str, bool]]:
    """A compose service's bind mounts: (host path, container path, read-only)."""
    binds = []
    for volume in service.get("volumes", []):
        source, target, *options = volume.split(":")
        if source.startswith((".", "/")):
            read_only = "ro" in ",".join(options).split(",")
            binds.append(((COMPOSE.parent / source).resolve(), target, read_only))
    return binds


def _host_path(service: dict[str, Any], container_path: str) -> Path:
    """The host file behind ``container_path`` in a compose service, through its bind mounts."""
    wanted = PurePosixPath(container_path)
    for host, target, _ in _binds(service):
        if wanted == PurePosixPath(target) or PurePosixPath(target) in wanted.parents:
            return host / wanted.relative_to(target)
    raise AssertionError(f"{container_path} is not bind-mounted from the repository")


def _seconds(duration: str) -> float:
    """A compose or Prometheus duration such as ``30s``, ``2m`` or ``1h30m``, in seconds."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", duration)
    assert parts, duration
    return sum(float(n) * units[u] for n, u in parts)


def _settings(path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """``load_settings(path)`` with exactly ``env`` as syncd's environment overrides."""
    for name in os.environ:
        if name.startswith("SYNCD_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings(path)


def _alert_rules() -> list[dict[str, Any]]:
    """Every alerting rule in alerts.yml."""
    groups = _yaml(ALERTS)["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def _dashboard() -> dict[str, Any]:
    """The provisioned dashboard's JSON."""
    data = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' collapsed children included."""
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])


def _dashboard_queries() -> list[str]:
    """Every PromQL expression the dashboard runs."""
    return [
        target["expr"]
        for panel in _panels(_dashboard())
        for target in panel.get("targets", [])
        if target.get("expr")
    ]


def _grafana_to_promql(expr: str) -> str:
    """A dashboard expression with Grafana's variables replaced by plain durations."""
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def _datasource_uid() -> str:
    """The uid of the provisioned Prometheus datasource."""
    (source,) = _yaml(DATASOURCES)["datasources"]
    assert source["type"] == "prometheus"
    return str(source["uid"])


@pytest.fixture(scope="module")
def k8s_documents() -> list[dict[str, Any]]:
    """Every document of every manifest in deploy/k8s."""
    documents: list[dict[str, Any]] = []
    for path in sorted(K8S.glob("*.yaml")):
        documents.extend(d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d)
    assert documents, "deploy/k8s holds no manifests"
    return documents


def _kind(documents: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The one document of ``kind``."""
    (document,) = (d for d in documents if d.get("kind") == kind)
    return document


def _container(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """The syncd container of the Deployment."""
    pod = _kind(documents, "Deployment")["spec"]["template"]["spec"]
    (container,) = (c for c in pod["containers"] if c["name"] == "syncd")
    assert isinstance(container, dict)
    return container


def _container_port(container: dict[str, Any], port: int | str) -> int:
    """A probe's or Service's port as a number: named ports resolve through the container's."""
    if isinstance(port, int):
        return port
    (number,) = (p["containerPort"] for p in container["ports"] if p.get("name") == port)
    return int(number)


def _deployment_env(documents: list[dict[str, Any]]) -> dict[str, str]:
    """The container's environment, with secretKeyRef values read from the Secret."""
    secret = _kind(documents, "Secret")
    values = dict(secret.get("stringData", {}))
    env = {}
    for item in _container(documents).get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            assert ref["name"] == secret["metadata"]["name"], ref
            env[item["name"]] = values[ref["key"]]
    return env


def _configmap_toml(documents: list[dict[str, Any]], tmp_path: Path) -> Path:
    """The ConfigMap's syncd config, written where SYNCD_CONFIG names it (under tmp_path)."""
    config = PurePosixPath(_deployment_env(documents)["SYNCD_CONFIG"])
    path = tmp_path / config.name
    path.write_text(_kind(documents, "ConfigMap")["data"][config.name], encoding="utf-8")
    return path


def _image_seeds_exist(settings: Settings) -> None:
    """Every seed the config names is one the image bundles from the repository's seeds/."""
    for author in settings.authors:
        assert author.seeds, author.name
        for seed in author.seeds:
            assert seed.parent == Path("/app/seeds"), seed
            assert (ROOT / "seeds" / seed.name).is_file(), seed


# -- the PromQL scanner the checks below rely on --------------------------------


def test_promql_metric_names_skips_functions_labels_and_keywords() -> None:
    """The scanner finds the selected metrics and nothing else of an expression."""
    expr = (
        'histogram_quantile(0.9, sum by (le) (rate(a_bucket{x="y z"}[5m] offset 1h))) '
        '/ on (job) group_left (le) max without (i) (b) > bool 0.5 or absent(up{job="j"})'
        " unless c:rec[$__rate_interval]"
    )
    assert promql_metric_names(expr) == {"a_bucket", "b", "up", "c:rec"}


# -- compose ---------------------------------------------------------------------


def test_compose_has_the_four_services_with_healthchecks(compose: dict[str, Any]) -> None:
    """compose.yaml runs syncd, PostgreSQL, Prometheus and Grafana, each with a healthcheck."""
    services = compose["services"]
    assert set(services) == SERVICES
    for name, service in services.items():
        test = service.get("healthcheck", {}).get("test")
        assert test and test[0] in {"CMD", "CMD-SHELL"}, f"{name} has no healthcheck"
    syncd_check = " ".join(services["syncd"]["healthcheck"]["test"])
    assert "urllib" in syncd_check
    assert "/healthz" in syncd_check
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]


def test_compose_depends_on_healthy_services(compose: dict[str, Any]) -> None:
    """syncd waits for a healthy PostgreSQL and Grafana for a healthy Prometheus."""
    services = compose["services"]
    assert services["syncd"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["grafana"]["depends_on"] == {"prometheus": {"condition": "service_healthy"}}
    for service in services.values():
        for dependency in service.get("depends_on", {}):
            assert "healthcheck" in services[dependency]


def test_compose_mounts_exist_and_volumes_are_named(compose: dict[str, Any]) -> None:
    """Every bind-mounted host path exists under deploy/, and every other volume is declared."""
    for name, service in compose["services"].items():
        for host, target, read_only in _binds(service):
            assert host.exists(), f"{name}: {host} (mounted at {target}) does not exist"
            assert DEPLOY in host.parents, f"{name}: {host} is outside deploy/"
            assert read_only, f"{name}: {target} should be mounted read-only"
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if not source.startswith((".", "/")):
                assert source in compose["volumes"], f"{name}: volume {source} is not declared"
    grafana_targets = {target for _, target, _ in _binds(compose["services"]["grafana"])}
    assert "/etc/grafana/provisioning" in grafana_targets
    assert (COMPOSE.parent / compose["services"]["syncd"]["build"]["context"]).is_dir()


def test_compose_pins_image_tags(compose: dict[str, Any]) -> None:
    """The third-party images are pinned to the versions the files were written for."""
    images = {name: s["image"] for name, s in compose["services"].items()}
    assert images["postgres"] == "postgres:16"
    assert re.fullmatch(r"prom/prometheus:v2\.\d+\.\d+", images["prometheus"])
    assert re.fullmatch(r"grafana/grafana:1[01]\.\d+\.\d+", images["grafana"])
    assert _interpolate(images["syncd"]) == "syncd:latest"


def test_compose_syncd_config_loads_and_matches_the_stack(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """syncd's mounted config loads with the compose environment and uses PostgreSQL on :8000."""
    services = compose["services"]
    syncd = services["syncd"]
    env = {k: _interpolate(str(v)) for k, v in syncd["environment"].items()}
    settings = _settings(_host_path(syncd, env["SYNCD_CONFIG"]), env, monkeypatch)
    postgres = services["postgres"]["environment"]
    user, database = postgres["POSTGRES_USER"], postgres["POSTGRES_DB"]
    password = _interpolate(postgres["POSTGRES_PASSWORD"])
    assert settings.database.url == (
        f"postgresql+psycopg://{user}:{password}@postgres:5432/{database}"
    )
    assert settings.http.host == "0.0.0.0"
    assert f"127.0.0.1:{settings.http.port}/healthz" in " ".join(syncd["healthcheck"]["test"])
    assert _seconds(syncd["stop_grace_period"]) > settings.delivery.shutdown_grace
    _image_seeds_exist(settings)
    scrape = next(j for j in _yaml(PROMETHEUS_CONFIG)["scrape_configs"] if j["job_name"] == "syncd")
    (discovery,) = scrape["dns_sd_configs"]
    assert discovery["names"] == ["syncd"]
    assert discovery["port"] == settings.http.port


# -- Prometheus ------------------------------------------------------------------


def test_promtool_checks_the_config_and_its_rule_files(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """promtool accepts prometheus.yml and finds alerts.yml beside it, where compose mounts both."""
    output = _run_promtool("check", "config", PROMETHEUS_CONFIG, cwd=tmp_path)
    config = _yaml(PROMETHEUS_CONFIG)
    assert [PROMETHEUS_CONFIG.parent / f for f in config["rule_files"]] == [ALERTS]
    assert "1 rule files found" in output
    prometheus = compose["services"]["prometheus"]
    (flag,) = (a for a in prometheus["command"] if a.startswith("--config.file="))
    assert _host_path(prometheus, flag.split("=", 1)[1]) == PROMETHEUS_CONFIG


def test_promtool_checks_the_alert_rules(tmp_path: Path) -> None:
    """promtool check rules accepts alerts.yml, which holds the alerts the task asks for."""
    output = _run_promtool("check", "rules", ALERTS, cwd=tmp_path)
    assert f"{len(ALERT_NAMES)} rules found" in output
    rules = _alert_rules()
    assert {r["alert"] for r in rules} == ALERT_NAMES
    for rule in rules:
        assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_promtool_passes_the_alert_unit_tests(tmp_path: Path) -> None:
    """promtool test rules passes alerts.test.yml, which has firing and quiet cases per alert."""
    output = _run_promtool("test", "rules", ALERT_TESTS, cwd=tmp_path)
    assert "SUCCESS" in output
    tests = _yaml(ALERT_TESTS)
    assert [ALERT_TESTS.parent / f for f in tests["rule_files"]] == [ALERTS]
    firing: set[str] = set()
    quiet: set[str] = set()
    for case in tests["tests"]:
        for check in case.get("alert_rule_test", []):
            (firing if check["exp_alerts"] else quiet).add(check["alertname"])
    assert firing == ALERT_NAMES
    assert quiet == ALERT_NAMES


def test_alert_expressions_use_only_exported_metrics(exported_names: set[str]) -> None:
    """Every metric an alert selects is one syncd.metrics.REGISTRY exports (or Prometheus' up)."""
    used: set[str] = set()
    for rule in _alert_rules():
        used |= promql_metric_names(rule["expr"])
    assert used - PROMETHEUS_SERIES, "no syncd metric found in the alert rules"
    assert used <= exported_names | PROMETHEUS_SERIES, used - exported_names


# -- Grafana ---------------------------------------------------------------------


def test_grafana_provisioning_matches_compose(compose: dict[str, Any]) -> None:
    """The datasource points at compose's Prometheus, the provider at the mounted dashboards."""
    (source,) = _yaml(DATASOURCES)["datasources"]
    assert source["url"] == "http://prometheus:9090"
    assert "prometheus" in compose["services"]
    grafana = compose["services"]["grafana"]
    (provider,) = _yaml(DASHBOARD_PROVIDERS)["providers"]
    assert provider["type"] == "file"
    folder = _host_path(grafana, provider["options"]["path"])
    assert DASHBOARD in folder.glob("*.json")
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert _host_path(grafana, home) == DASHBOARD


def test_dashboard_has_the_panels_and_uses_the_provisioned_datasource() -> None:
    """The dashboard is valid JSON with the panels the task names, all on the provisioned uid."""
    dashboard = _dashboard()
    assert dashboard["uid"]
    panels = list(_panels(dashboard))
    assert {p["title"] for p in panels} >= DASHBOARD_PANELS
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    uid = _datasource_uid()
    for panel in panels:
        position = panel["gridPos"]
        assert position["x"] + position["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == uid, panel["title"]
            assert target["expr"].strip(), panel["title"]


def test_dashboard_queries_use_only_exported_metrics(exported_names: set[str]) -> None:
    """Every metric a dashboard query selects is one syncd.metrics.REGISTRY exports."""
    used: set[str] = set()
    for expr in _dashboard_queries():
        used |= promql_metric_names(expr)
    assert used <= exported_names | PROMETHEUS_SERIES, used - exported_names
    # The families the task asks the dashboard to show.
    for name in (
        "syncd_last_successful_sync_timestamp_seconds",
        "syncd_upstream_requests_total",
        "syncd_event_kinds_total",
        "syncd_webhook_deliveries_total",
        "syncd_webhook_delivery_latency_seconds_bucket",
        "syncd_outbox_pending",
    ):
        assert name in used, name


def test_dashboard_queries_parse_as_promql(tmp_path: Path) -> None:
    """promtool parses every dashboard query, given as a recording rule."""
    rules = [
        {"record": f"dashboard:query_{i}", "expr": _grafana_to_promql(expr)}
        for i, expr in enumerate(_dashboard_queries())
    ]
    path = tmp_path / "dashboard.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    assert f"{len(rules)} rules found" in _run_promtool("check", "rules", path, cwd=tmp_path)


# -- Kubernetes -------------------------------------------------------------------


def test_k8s_documents_validate_against_the_bundled_schemas(
    k8s_documents: list[dict[str, Any]],
) -> None:
    """Every manifest names itself and validates strictly against Kubernetes' own schemas."""
    assert {d["kind"] for d in k8s_documents} >= {"Deployment", "Service", "ConfigMap", "Secret"}
    for document in k8s_documents:
        assert document["apiVersion"] and document["kind"] and document["metadata"]["name"]
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(document, version, strict=True)


def test_k8s_selectors_match_the_pods(k8s_documents: list[dict[str, Any]]) -> None:
    """The Deployment's selector and the Service's both select the Deployment's pods."""
    deployment = _kind(k8s_documents, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= labels.items()
    assert _kind(k8s_documents, "Service")["spec"]["selector"].items() <= labels.items()


def test_k8s_probes_hit_the_configured_port_and_real_endpoints(
    k8s_documents: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Liveness, readiness and startup probes use /healthz and /readyz on the configured port."""
    container = _container(k8s_documents)
    settings = _settings(
        _configmap_toml(k8s_documents, tmp_path), _deployment_env(k8s_documents), monkeypatch
    )
    assert settings.http.host == "0.0.0.0"
    probes = {
        kind: container[f"{kind}Probe"]["httpGet"] for kind in ("liveness", "readiness", "startup")
    }
    assert probes["liveness"]["path"] == "/healthz"
    assert probes["readiness"]["path"] == "/readyz"
    assert probes["startup"]["path"] in {"/healthz", "/readyz"}
    for probe in probes.values():
        assert _container_port(container, probe["port"]) == settings.http.port
    (service_port,) = _kind(k8s_documents, "Service")["spec"]["ports"]
    assert _container_port(container, service_port["targetPort"]) == settings.http.port
    annotations = _kind(k8s_documents, "Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(settings.http.port)


def test_every_probed_path_is_served_by_syncd() -> None:
    """Each path probed, health-checked or scraped answers 200 from syncd's HTTP server."""
    with HttpServer("127.0.0.1", 0, ready=lambda: Readiness(True, {"database": "ok"})) as server:
        for path in sorted(HEALTH_PATHS):
            response = httpx.get(f"http://127.0.0.1:{server.port}{path}", timeout=5)
            assert response.status_code == 200, path
    scrape = next(j for j in _yaml(PROMETHEUS_CONFIG)["scrape_configs"] if j["job_name"] == "syncd")
    assert scrape["metrics_path"] in HEALTH_PATHS


def test_k8s_container_is_locked_down(k8s_documents: list[dict[str, Any]]) -> None:
    """The container runs as non-root, read-only, without privileges, with resource requests."""
    pod = _kind(k8s_documents, "Deployment")["spec"]["template"]["spec"]
    container = _container(k8s_documents)
    security = pod.get("securityContext", {}) | container["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["runAsUser"] != 0
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert not security.get("privileged", False)
    requests = container["resources"]["requests"]
    assert requests["cpu"] and requests["memory"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    assert "emptyDir" in mounts["/tmp"]
    assert "/data" in mounts


def test_k8s_secret_holds_every_referenced_key(k8s_documents: list[dict[str, Any]]) -> None:
    """Each secretKeyRef names the Secret and one of its keys; the values have the right shape."""
    secret = _kind(k8s_documents, "Secret")
    keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    refs = [
        item["valueFrom"]["secretKeyRef"]
        for item in _container(k8s_documents).get("env", [])
        if "secretKeyRef" in item.get("valueFrom", {})
    ]
    assert refs
    for ref in refs:
        assert ref["name"] == secret["metadata"]["name"]
        assert ref["key"] in keys
    env = _deployment_env(k8s_documents)
    assert env["SYNCD_DATABASE_URL"].startswith("postgresql://")
    for secret_value in env["SYNCD_WEBHOOK_SECRET"].split():
        assert signing_key(secret_value)


def test_k8s_configmap_loads_where_syncd_config_points(
    k8s_documents: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ConfigMap's TOML loads with the Deployment's environment, mounted at SYNCD_CONFIG."""
    env = _deployment_env(k8s_documents)
    toml_path = _configmap_toml(k8s_documents, tmp_path)
    tomllib.loads(toml_path.read_text(encoding="utf-8"))
    settings = _settings(toml_path, env, monkeypatch)
    assert settings.database.url.startswith("postgresql+psycopg://")
    assert settings.webhooks
    for hook in settings.webhooks:
        assert hook.secret_env in env, f"{hook.display_name}: {hook.secret_env} is not set"
    _image_seeds_exist(settings)

    config = PurePosixPath(env["SYNCD_CONFIG"])
    pod = _kind(k8s_documents, "Deployment")["spec"]["template"]["spec"]
    container = _container(k8s_documents)
    (mount,) = (m for m in container["volumeMounts"] if m["mountPath"] == str(config.parent))
    assert mount.get("readOnly") is True
    (volume,) = (v for v in pod["volumes"] if v["name"] == mount["name"])
    assert volume["configMap"]["name"] == _kind(k8s_documents, "ConfigMap")["metadata"]["name"]
    paths = {i["key"]: i["path"] for i in volume["configMap"].get("items", [])}
    assert paths.get(config.name, config.name) == config.name
    assert pod["terminationGracePeriodSeconds"] > settings.delivery.shutdown_grace
