"""An OTLP/gRPC metrics receiver on PyPI's opentelemetry-proto and grpcio: a second
implementation reading what dcgm-exporter sends (tests/otlp.rs runs it).

It listens on a free loopback port and prints the port; on the first Export it prints one
JSON line summarising the request (resource attributes, scope, and per data point its
metric's name, unit and kind, its hw.id, whether it is a MIG instance's, and its value),
answers, and exits.
"""

import json
import sys
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc


def any_value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def summarise(request):
    out = {"resource": {}, "scope": None, "points": []}
    for rm in request.resource_metrics:
        for kv in rm.resource.attributes:
            out["resource"].setdefault(kv.key, any_value(kv.value))
        for sm in rm.scope_metrics:
            out["scope"] = sm.scope.name
            for m in sm.metrics:
                data = m.WhichOneof("data")
                if data == "gauge":
                    kind, points = "gauge", m.gauge.data_points
                elif data == "sum":
                    cumulative = m.sum.aggregation_temporality == 2
                    kind = "sum_" + ("monotonic_" if m.sum.is_monotonic else "") + (
                        "cumulative" if cumulative else "delta"
                    )
                    points = m.sum.data_points
                else:
                    continue
                for p in points:
                    attrs = {kv.key: any_value(kv.value) for kv in p.attributes}
                    value = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
                    out["points"].append(
                        {
                            "name": m.name,
                            "unit": m.unit,
                            "kind": kind,
                            "hw.id": attrs.get("hw.id"),
                            "mig": "dcgm.gpu_instance.id" in attrs,
                            "value": value,
                        }
                    )
    return out


class Receiver(metrics_service_pb2_grpc.MetricsServiceServicer):
    def __init__(self):
        self.done = threading.Event()

    def Export(self, request, context):
        if not self.done.is_set():
            print(json.dumps(summarise(request)), flush=True)
            self.done.set()
        return metrics_service_pb2.ExportMetricsServiceResponse()


def main():
    receiver = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(receiver, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    if not receiver.done.wait(timeout=60):
        print("no Export within 60 s", file=sys.stderr)
        sys.exit(1)
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
