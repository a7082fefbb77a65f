# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 22
import torch

torch.manual_seed(0)


def make_frames(signal, win, hop):
    n = (signal.numel() - win) // hop + 1
    return signal.as_strided((n, win), (hop, 1))


class Preprocessor:
    def __init__(self, win=16, hop=8):
        self.win, self.hop = win, hop

    def __call__(self, signal):
        frames = make_frames(signal, self.win, self.hop)
        peak = signal.abs().max()
        signal.div_(peak)  # peak-normalised waveform for the vocoder branch
        return frames, signal


def frame_energy_db(frames):
    return 10 * torch.log10(frames.pow(2).mean(1) + 1e-8)


wave = torch.randn(128) * 3.0
raw = wave.clone()  # reference for the check
pre = Preprocessor()
frames, normalised = pre(wave)
energy = frame_energy_db(frames)
print("frames", tuple(frames.shape), "energy dB", [round(e, 2) for e in energy[:4].tolist()])
print("normalised peak", round(normalised.abs().max().item(), 4))

# check: the energy is meant to be the energy of the recorded (raw) signal
expected = frame_energy_db(make_frames(raw, 16, 8))
hazard = not torch.allclose(energy, expected)
print("truth: hazard" if hazard else "truth: harmless")
