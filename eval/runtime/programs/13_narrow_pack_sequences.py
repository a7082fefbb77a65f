# truth: harmless
# rule: TAL301
# category: returned-alias
import torch

torch.manual_seed(0)


def pack(sequences, dim):
    """Pack variable-length sequences into one flat buffer; return it with the offsets."""
    total = sum(s.size(0) for s in sequences)
    buf = torch.empty(total, dim)
    offsets = []
    off = 0
    for s in sequences:
        slot = buf.narrow(0, off, s.size(0))
        slot.copy_(s)
        offsets.append(off)
        off += s.size(0)
    return buf, offsets


def unpack(buf, offsets, lengths):
    return [buf.narrow(0, o, n) for o, n in zip(offsets, lengths)]


seqs = [torch.randn(n, 3) for n in (2, 5, 1, 4)]
flat, offs = pack(seqs, 3)
pooled = torch.stack([chunk.mean(0) for chunk in unpack(flat, offs, [s.size(0) for s in seqs])])
print("offsets", offs, "pooled[1]", [round(v, 4) for v in pooled[1].tolist()])

# check: the packed buffer holds the sequences
expected = torch.stack([s.mean(0) for s in seqs])
hazard = not (torch.equal(flat, torch.cat(seqs)) and torch.allclose(pooled, expected))
print("truth: hazard" if hazard else "truth: harmless")
