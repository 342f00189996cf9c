# Pageable host-to-device copies of 256 MiB, for argv[1] seconds.
import sys, time
import torch
x = torch.empty(256 << 20, dtype=torch.uint8)
t0 = time.time()
while time.time() - t0 < float(sys.argv[1]):
    y = x.to("cuda")
    torch.cuda.synchronize()
