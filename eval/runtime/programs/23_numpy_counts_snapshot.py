# truth: hazard
# rule: TAL301
# category: numpy
# static: 29
import numpy as np
import torch

torch.manual_seed(0)


class ClassCounter:
    def __init__(self, k):
        self.counts = torch.zeros(k)

    def update(self, labels):
        self.counts.index_add_(0, labels, torch.ones(labels.numel()))

    def as_array(self):
        return self.counts.numpy()


counter = ClassCounter(4)
new_per_epoch = []
reference_new = []
for epoch in range(3):
    start = counter.as_array()
    start_copy = counter.counts.clone().numpy()  # for the check
    for _ in range(5):
        counter.update(torch.randint(0, 4, (8,)))
    new_per_epoch.append((counter.as_array() - start).tolist())
    reference_new.append((counter.counts.numpy() - start_copy).tolist())
print("new samples per class per epoch", new_per_epoch)

# check: each epoch saw 40 new labels
hazard = new_per_epoch != reference_new
print("truth: hazard" if hazard else "truth: harmless")
