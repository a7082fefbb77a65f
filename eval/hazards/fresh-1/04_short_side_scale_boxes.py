"""Shape: a transform scales its boxes argument in place; the caller keeps the boxes (TAL301).

Repo: facebookresearch/pytorchvideo, commit f3142bb05cdb56af0704ab6f0adfb0c7bbafe4a0,
pytorchvideo/transforms/functional.py:227 (and :229), short_side_scale_with_boxes.
`boxes *= float(new_h) / h` writes the caller's boxes (the sibling transforms crop/flip/clip return
copies). A dataset that keeps its annotations and calls the transform every epoch has its boxes
rescaled again each time. Own code in the shape of the hazard, not the project's source.
"""
import torch


def scale_with_boxes(images, boxes, size):
    c, t, h, w = images.shape
    scale = size / min(h, w)
    images = torch.nn.functional.interpolate(images, scale_factor=scale, mode="bilinear")
    boxes *= scale
    return images, boxes


class CachedClips:
    def __init__(self):
        self.video = torch.rand(3, 2, 20, 40)
        self.boxes = torch.tensor([[2.0, 2.0, 10.0, 10.0]])

    def __getitem__(self, i):
        return scale_with_boxes(self.video, self.boxes, 10)


ds = CachedClips()
_, b1 = ds[0]
b1 = b1.clone()
_, b2 = ds[0]
print("epoch 1 boxes:", b1.tolist(), "epoch 2 boxes:", b2.tolist())
assert not torch.equal(b1, b2), "hazard not shown"
print("HAZARD SHOWN: the cached boxes were rescaled again on the second read")
