"""Train a small CNN (Conv2d, BatchNorm2d, ReLU, MaxPool2d, Dropout, Linear) on synthetic 16x16 images of
four patterns (a horizontal bar, a vertical bar, a diagonal, a square) at random places in noise, with a
DataLoader over a TensorDataset, AdamW and a cosine learning-rate schedule, printing the loss and accuracies
of each epoch.

With `import symgrad as sg` replaced by `import torch as sg` this is the PyTorch program. The data, the
order of the examples (a NumPy permutation as the DataLoader's sampler) and the initial weights come from
NumPy, so both print the same numbers with DROPOUT = 0.0 (tests/test_cnn_example.py compares them); with
dropout on, each library draws its own masks.
"""
import numpy as np

import symgrad as sg

CLASSES, SIZE, EPOCHS, BATCH, DROPOUT = 4, 16, 6, 64, 0.25
DTYPE = sg.float32


def make_images(count, seed):
    """`count` images (count, 1, SIZE, SIZE) and their labels: a 4-pixel pattern of the label's kind."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, count)
    images = 0.3 * rng.standard_normal((count, 1, SIZE, SIZE))
    for image, label, (row, col) in zip(images, labels, rng.integers(2, SIZE - 6, (count, 2))):
        if label == 0:
            image[0, row, col:col + 4] += 1.5
        elif label == 1:
            image[0, row:row + 4, col] += 1.5
        elif label == 2:
            image[0, np.arange(row, row + 4), np.arange(col, col + 4)] += 1.5
        else:
            image[0, row:row + 2, col:col + 2] += 1.5
    return images.astype(np.float32), labels.astype(np.int64)


def build_model():
    """Conv layers without biases: the BatchNorm after each would cancel them (their gradients are rounding
    noise, which Adam would scale up to full steps)."""
    return sg.nn.Sequential(
        sg.nn.Conv2d(1, 8, 3, padding=1, bias=False, dtype=DTYPE), sg.nn.BatchNorm2d(8, dtype=DTYPE), sg.nn.ReLU(),
        sg.nn.MaxPool2d(2),
        sg.nn.Conv2d(8, 16, 3, padding=1, bias=False, dtype=DTYPE), sg.nn.BatchNorm2d(16, dtype=DTYPE), sg.nn.ReLU(),
        sg.nn.MaxPool2d(2),
        sg.nn.Flatten(), sg.nn.Dropout(DROPOUT), sg.nn.Linear(16 * (SIZE // 4) ** 2, CLASSES, dtype=DTYPE))


def load_weights(model, seed):
    """The same initial weights in any library: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight matrices and
    kernels, ones for the BatchNorm scales, zeros for the biases."""
    rng = np.random.default_rng(seed)
    with sg.no_grad():
        for name, parameter in model.named_parameters():
            shape = tuple(parameter.shape)
            if len(shape) > 1:
                bound = 1 / np.sqrt(np.prod(shape[1:]))
                value = rng.uniform(-bound, bound, shape)
            else:
                value = np.ones(shape) if isinstance(model[int(name.split(".")[0])], sg.nn.BatchNorm2d) and \
                    name.endswith("weight") else np.zeros(shape)
            parameter.copy_(sg.from_numpy(value.astype(np.float32)))


def accuracy(model, images, labels):
    model.eval()
    with sg.no_grad():
        predicted = model(sg.from_numpy(images)).argmax(1)
        correct = (predicted == sg.from_numpy(labels)).sum().item()
    model.train()
    return correct / len(labels)


def main():
    train_images, train_labels = make_images(512, seed=0)
    test_images, test_labels = make_images(256, seed=1)
    train = sg.utils.data.TensorDataset(sg.from_numpy(train_images), sg.from_numpy(train_labels))
    sg.manual_seed(0)  # the dropout masks
    model = build_model()
    load_weights(model, seed=2)
    optimizer = sg.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
    schedule = sg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)
    loss_fn = sg.nn.CrossEntropyLoss()
    order = np.random.default_rng(3)
    for epoch in range(EPOCHS):
        total = 0.0
        batches = sg.utils.data.DataLoader(train, batch_size=BATCH, sampler=order.permutation(len(train)).tolist())
        for images, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
        schedule.step()
        print(f"epoch {epoch + 1}: loss {total / len(train):.4f}, "
              f"train accuracy {accuracy(model, train_images, train_labels):.4f}, "
              f"test accuracy {accuracy(model, test_images, test_labels):.4f}, "
              f"learning rate {schedule.get_last_lr()[0]:.5f}")


if __name__ == "__main__":
    main()
