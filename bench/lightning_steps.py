"""lightning_steps [STEPS [RUNS]]: the median CPU time (of its thread) of a Lightning training step, in microseconds.

A small MLP on in-memory batches (CPU, one thread), so that the step is mostly Lightning's own Python: the
case where a per-call cost of profwrap's --python-functions shows most. bench/run.sh runs it under profwrap
with and without the option, alternately, when Lightning is importable (make e2e's environment)."""
import statistics
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import lightning as L


class Steps(L.Callback):
    def __init__(self):
        self.times = []
        self.t0 = 0.0

    def on_train_batch_start(self, *args):
        self.t0 = time.thread_time()

    def on_train_batch_end(self, *args):
        self.times.append(time.thread_time() - self.t0)


class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        self.loss_fn = nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        return self.loss_fn(self.model(batch[0]), batch[1])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = [(torch.randn(16, 32), torch.randint(0, 4, (16,))) for _ in range(steps)]
    cb = Steps()
    trainer = L.Trainer(max_epochs=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, callbacks=[cb])
    trainer.fit(Net(), DataLoader(data, batch_size=None))
    print("lightning_steps steps=%d median_us=%.1f" % (len(cb.times), statistics.median(cb.times) * 1e6))


if __name__ == "__main__":
    main()
