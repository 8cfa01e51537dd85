# PyTorch's "Learn the Basics", "Datasets & DataLoaders" and "Transforms" (beginner_source/basics/data_tutorial.py,
# transforms_tutorial.py), `import torch` renamed: a custom Dataset reading an annotations file and image files, with
# a transform and a target_transform (ToTensor's scaling, and the one-hot Lambda with scatter_), iterated by a
# DataLoader. Changed (marked): the images are uint8 arrays saved with NumPy in a temporary directory (no downloads;
# decode_image and pandas are np.load and the csv module), the loaders do not shuffle (symgrad's random order is not
# PyTorch's), and the sample index is fixed instead of drawn by randint.
import csv
import os
import tempfile

import numpy as np
import symgrad as sg
from symgrad.utils.data import Dataset, DataLoader

rng = np.random.default_rng(7)  # changed: the random numbers' source
labels_map = {
    0: "T-Shirt",
    1: "Trouser",
    2: "Pullover",
    3: "Dress",
    4: "Coat",
    5: "Sandal",
    6: "Shirt",
    7: "Sneaker",
    8: "Bag",
    9: "Ankle Boot",
}

img_dir = tempfile.TemporaryDirectory()  # changed: the data set written here
annotations_file = os.path.join(img_dir.name, "labels.csv")
with open(annotations_file, "w", newline="") as f:
    writer = csv.writer(f)
    for i in range(150):
        np.save(os.path.join(img_dir.name, f"img{i}.npy"), rng.integers(0, 256, (1, 28, 28), dtype=np.uint8))
        writer.writerow([f"img{i}.npy", int(rng.integers(0, 10))])


def decode_image(path):  # changed: stands for torchvision.io.decode_image
    return sg.from_numpy(np.load(path))


class CustomImageDataset(Dataset):
    def __init__(self, annotations_file, img_dir, transform=None, target_transform=None):
        with open(annotations_file) as f:  # changed: pd.read_csv(annotations_file)
            self.img_labels = [(name, int(label)) for name, label in csv.reader(f)]
        self.img_dir = img_dir
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        img_path = os.path.join(self.img_dir, self.img_labels[idx][0])  # changed: .iloc[idx, 0]
        image = decode_image(img_path)
        label = self.img_labels[idx][1]  # changed: .iloc[idx, 1]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


ToTensor = lambda image: image.float() / 255  # changed: torchvision's ToTensor on a uint8 tensor
target_transform = lambda y: sg.zeros(10, dtype=sg.float).scatter_(0, sg.tensor(y), value=1)  # Lambda(...)

training_data = CustomImageDataset(annotations_file, img_dir.name, transform=ToTensor)
test_data = CustomImageDataset(annotations_file, img_dir.name, transform=ToTensor, target_transform=target_transform)

sample_idx = 17  # changed: sg.randint(len(training_data), size=(1,)).item()
img, label = training_data[sample_idx]
print(labels_map[label], img.shape, img.dtype, img.squeeze().sum().item())

train_dataloader = DataLoader(training_data, batch_size=64, shuffle=False)  # changed: shuffle=True
test_dataloader = DataLoader(test_data, batch_size=64, shuffle=False)  # changed: shuffle=True

# Display image and label.
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
img = train_features[0].squeeze()
label = train_labels[0]
print(img.shape, img[10, :6])  # changed: plt.imshow(img, cmap="gray")
print(f"Label: {label}")

for features, targets in test_dataloader:  # changed: the last batch and the one-hot targets printed
    print(features.shape, targets.shape, targets.dtype)
print(targets[:3])
print(targets.sum(0))
img_dir.cleanup()
