# A training step fed by a CPU-heavy data loader: num_workers=0 (starved) or 8 workers with
# pinned memory (fixed). Runs for argv[2] seconds.
import sys, time
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class Images(Dataset):
    def __len__(self):
        return 10**7
    def __getitem__(self, i):
        x = np.random.rand(256, 256).astype(np.float32)
        for _ in range(4):
            x = np.sqrt(x * x + 1.0)  # CPU-heavy transforms
        return torch.from_numpy(x)

mode, seconds = sys.argv[1], float(sys.argv[2])
fixed = mode == "fixed"
loader = DataLoader(Images(), batch_size=64, num_workers=8 if fixed else 0, pin_memory=fixed)
w = torch.randn(256, 8192, device="cuda")
t0 = time.time()
for xb in loader:
    xb = xb.cuda(non_blocking=True)
    for _ in range(30):
        y = torch.relu(xb @ w) @ w.T
    torch.cuda.synchronize()
    if time.time() - t0 > seconds:
        break
