"""profwrap's end-to-end Lightning workload: Lightning's hook actions as NVTX ranges and SimpleProfiler's timings
of the same actions, in one run.

    python lightning_train.py --out DIR [--epochs 2] [--files 64] [--batch-size 8] [--profiler both|simple|none]

Lightning's Trainer takes one profiler, and calls profiler.start(action) / profiler.stop(action) around every
hook it runs ("run_training_batch", "[Strategy]SingleDeviceStrategy.training_step",
"[LightningModule]LitMLP.optimizer_step", ...). BothProfilers, below, is a Profiler that hands each of those
calls to two profilers, as a Lightning user who wants both would write it:

  - SimpleProfiler: time.perf_counter() at start and stop of each action, in Python; its table is written to
    DIR/fit-simple.txt, and its raw durations to DIR/simple.json ({action: [seconds, ...]});
  - PyTorchProfiler(emit_nvtx=True): enters torch.autograd.profiler.emit_nvtx() at the first action, and
    wraps every action in record_function("[pl][profile]" + action), which emit_nvtx turns into an NVTX range
    "[pl][profile]<action>, op_id = <n>" (PyTorch appends the record's id). Every autograd operation and, with
    record_module_names (the default), every submodule's forward ("[pl][module]...") are NVTX ranges too.

--profiler simple gives the Trainer SimpleProfiler alone, --profiler none no profiler (Lightning's
PassThroughProfiler, as an unmodified script runs): what profwrap --python-functions=lightning sees then.

Order: SimpleProfiler starts first and stops last, so each NVTX range lies inside SimpleProfiler's interval of
the same action.

Without a CUDA device, PyTorchProfiler(emit_nvtx=True) fails: it brackets the run with
torch.cuda.profiler.profile() (cudaProfilerStart/Stop) and emit_nvtx calls torch.cuda.synchronize(), both of
which raise "Found no NVIDIA driver". There, and only there, NvtxPyTorchProfiler leaves out those device calls
and runs the rest unchanged (see train.emit_nvtx). With a GPU, it is PyTorchProfiler(emit_nvtx=True) as is.

The data are train.py's: FILES files read whole by a Dataset in a DataLoader with two workers.
"""
import argparse
import contextlib
import json
import os
import sys
import time

T_START = time.monotonic()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
import lightning as L  # noqa: E402
from lightning.pytorch.profilers import Profiler, PyTorchProfiler, SimpleProfiler  # noqa: E402

import train  # noqa: E402  (the dataset, the model and the CPU-safe emit_nvtx)

T_IMPORTED = time.monotonic()


class NvtxPyTorchProfiler(PyTorchProfiler):
    """PyTorchProfiler(emit_nvtx=True); without a CUDA device, without its two device calls (see the module's
    doc)."""

    def __init__(self, **kw):
        super().__init__(emit_nvtx=True, **kw)

    def _create_profilers(self):
        if torch.cuda.is_available() or self.profiler is not None:
            return super()._create_profilers()
        self._parent_profiler = contextlib.nullcontext()  # instead of torch.cuda.profiler.profile()
        self.profiler = self._create_profiler(train.emit_nvtx)


class BothProfilers(Profiler):
    """Hands every action Lightning profiles to a SimpleProfiler and to an NVTX-emitting PyTorchProfiler."""

    def __init__(self, simple, nvtx):
        super().__init__(dirpath=simple.dirpath, filename=simple.filename)
        self.simple = simple
        self.nvtx = nvtx

    # The Trainer hands the LightningModule to its profiler (PyTorchProfiler names submodules with it).
    @property
    def _lightning_module(self):
        return self.nvtx._lightning_module

    @_lightning_module.setter
    def _lightning_module(self, module):
        self.nvtx._lightning_module = module

    def start(self, action_name):
        self.simple.start(action_name)
        self.nvtx.start(action_name)

    def stop(self, action_name):
        self.nvtx.stop(action_name)
        self.simple.stop(action_name)

    def setup(self, stage, local_rank=None, log_dir=None):
        super().setup(stage, local_rank, log_dir)
        self.simple.setup(stage, local_rank, log_dir)
        self.nvtx.setup(stage, local_rank, log_dir)

    def summary(self):
        return self.simple.summary()

    def describe(self):
        self.nvtx.describe()  # emit_nvtx: writes nothing, ends the NVTX profiler
        self.simple.describe()  # writes DIR/fit-simple.txt

    def teardown(self, stage):
        self.nvtx.teardown(stage)
        self.simple.teardown(stage)
        super().teardown(stage)


class LitMLP(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = train.MLP()
        self.loss_fn = nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch[0], batch[1]
        return self.loss_fn(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory for the dataset, SimpleProfiler's files, counters.json")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--files", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--profiler", choices=("both", "simple", "none"), default="both")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    torch.set_num_threads(1)
    L.seed_everything(train.SEED, verbose=False)
    paths, dataset_bytes = train.write_dataset(os.path.join(out, "data"), args.files)
    loader = DataLoader(train.FileDataset(paths), batch_size=args.batch_size, shuffle=True,
                        num_workers=train.NUM_WORKERS, persistent_workers=train.PERSISTENT_WORKERS)

    simple = SimpleProfiler(dirpath=out, filename="simple")
    profiler = {"both": lambda: BothProfilers(simple, NvtxPyTorchProfiler(dirpath=out, filename="nvtx")),
                "simple": lambda: simple, "none": lambda: None}[args.profiler]()
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="auto", devices=1, profiler=profiler, logger=False,
                        default_root_dir=out, enable_progress_bar=False, enable_model_summary=False)
    t_fit = time.monotonic()
    trainer.fit(LitMLP(), loader)
    fit_s = time.monotonic() - t_fit

    durations = {k: list(v) for k, v in simple.recorded_durations.items()}
    with open(os.path.join(out, "simple.json"), "w") as f:
        json.dump(durations, f, indent=1)
    counters = {"epochs": args.epochs, "steps": trainer.global_step, "batches_per_epoch": len(loader),
                "dataset_files": len(paths), "dataset_bytes": dataset_bytes, "num_workers": train.NUM_WORKERS,
                "device": str(trainer.strategy.root_device), "torch": torch.__version__, "lightning": L.__version__,
                "emit_nvtx_mode": train.emit_nvtx_mode(), "simple_txt": os.path.join(out, "fit-simple.txt"),
                "import_s": round(T_IMPORTED - T_START, 3), "fit_s": round(fit_s, 3),
                "total_s": round(time.monotonic() - T_START, 3)}
    with open(os.path.join(out, "counters.json"), "w") as f:
        json.dump(counters, f, indent=1)
    print("lightning %s: %d steps in %d epochs, %d actions; import %.2f s, fit %.2f s" % (
        L.__version__, trainer.global_step, args.epochs, len(durations), counters["import_s"], fit_s), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
