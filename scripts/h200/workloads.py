"""Known GPU workloads for dcgm-rs's field runs on a GPU node (PyTorch), each printed with its
wall-clock start as `PHASE <name> <unix seconds>` so that a `dcgm-dmon --json` recording taken
beside it can be cut into phases (dcgm-doctor's replay format).

    python3 workloads.py sequence 20      # every workload below, 20 s each, one after another
    python3 workloads.py shared 40        # three processes on the GPU: a parent holding memory
                                          # and two small-batch training children
    python3 workloads.py small_batch_train 30

What each is for (the finding dcgm-doctor should give it):
  small_batch_train  a small transformer trained at batch size 2: the host sets the pace (host-bound)
  decode_bs1         token-by-token decoding at batch 1: many tiny kernels (host-bound, never "add
                     data-loader workers")
  infer_large_batch  bf16 inference at batch 512: tensor cores busy (compute-bound)
  optimizer_big      AdamW steps over 2 B fp32 parameters: memory bandwidth (memory-bound)
  fp32_no_tf32       fp32 matmuls with TF32 off: FP32 pipes busy, tensor cores idle (use TF32/bf16)
  stream_add         c = a + b over 4 GiB tensors: memory-bound, not compute-bound
  sleepy_service     a 0.15 s bf16 burst every 2 s: a mostly idle service
"""
import sys
import time

import torch

dev = torch.device("cuda")


def mark(name):
    print(f"PHASE {name} {time.time():.3f}", flush=True)


def small_batch_train(secs):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4).to(dev)
    head = torch.nn.Linear(256, 1000).to(dev)
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)
    end = time.time() + secs
    while time.time() < end:
        x = torch.randn(2, 64, 256, device=dev)
        y = torch.randint(0, 1000, (2, 64), device=dev)
        loss = torch.nn.functional.cross_entropy(head(model(x)).reshape(-1, 1000), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()  # a host sync every step, as a logging loop does


def decode_bs1(secs):
    w = [torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16) for _ in range(24)]
    h = torch.randn(1, 2048, device=dev, dtype=torch.bfloat16)
    end = time.time() + secs
    while time.time() < end:
        for _ in range(32):  # 32 tokens
            for m in w:
                h = torch.tanh(h @ m)
            h.argmax().item()  # the next token goes back to the host


def infer_large_batch(secs):
    w1 = torch.randn(4096, 16384, device=dev, dtype=torch.bfloat16)
    w2 = torch.randn(16384, 4096, device=dev, dtype=torch.bfloat16)
    x = torch.randn(512 * 8, 4096, device=dev, dtype=torch.bfloat16)
    end = time.time() + secs
    with torch.no_grad():
        while time.time() < end:
            for _ in range(10):
                y = torch.relu(x @ w1) @ w2
            torch.cuda.synchronize()
    del y


def optimizer_big(secs):
    params = [torch.nn.Parameter(torch.randn(50_000_000, device=dev)) for _ in range(40)]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-4, foreach=True)
    end = time.time() + secs
    while time.time() < end:
        opt.step()
        torch.cuda.synchronize()
    del opt, params


def fp32_no_tf32(secs):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(8192, 8192, device=dev)
    b = torch.randn_like(a)
    end = time.time() + secs
    while time.time() < end:
        for _ in range(4):
            c = a @ b
        torch.cuda.synchronize()
    del a, b, c


def stream_add(secs):
    a = torch.randn(1024 * 1024 * 1024, device=dev)  # 4 GiB
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    end = time.time() + secs
    while time.time() < end:
        for _ in range(10):
            torch.add(a, b, out=c)
        torch.cuda.synchronize()
    del a, b, c


def sleepy_service(secs):
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    end = time.time() + secs
    while time.time() < end:
        t = time.time() + 0.15
        while time.time() < t:
            a @ a
            torch.cuda.synchronize()
        time.sleep(1.85)


SEQUENCE = [
    small_batch_train,
    decode_bs1,
    infer_large_batch,
    optimizer_big,
    fp32_no_tf32,
    stream_add,
    sleepy_service,
]


def child(secs):
    small_batch_train(secs)


def shared(secs):
    import torch.multiprocessing as mp

    held = torch.empty(2 * 1024**3, dtype=torch.uint8, device=dev)  # the parent holds 2 GiB
    held.fill_(1)
    ctx = mp.get_context("spawn")
    kids = [ctx.Process(target=child, args=(secs,)) for _ in range(2)]
    mark("shared_gpu")
    for k in kids:
        k.start()
    for k in kids:
        k.join()
    del held
    mark("end")


def main():
    what = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    if what == "sequence":
        mark("idle")
        time.sleep(min(secs, 6))
        for w in SEQUENCE:
            mark(w.__name__)
            w(secs)
            torch.cuda.empty_cache()
        mark("end")
    elif what == "shared":
        shared(secs)
    else:
        mark(what)
        globals()[what](secs)
        mark("end")


if __name__ == "__main__":
    main()
