# pytorch/examples snli (model.py, and train.py's loop; removed from the repository in 2023, at 7f98915^): a
# sentence-pair classifier: Embedding, a projection by `Linear(Bottle, nn.Linear)` (a mixin applying a Linear to
# each (time, batch) row), a bidirectional LSTM encoder whose last states ht[-2:] are joined, and an MLP head,
# trained with Adam on CrossEntropyLoss and evaluated on a dev set. `import torch` renamed. Changed (marked):
# torchtext's SNLI iterators replaced by fixed synthetic batches of token ids, small sizes, float64, dropout 0
# (its masks are random), the weights from NumPy's generator (symgrad's random numbers are not PyTorch's), no
# snapshots or timings, config fixed instead of util.get_args().
import argparse
import collections

import numpy as np  # changed: the random numbers' source
import symgrad as sg
import symgrad.nn as nn
import symgrad.optim as O


class Bottle(nn.Module):

    def forward(self, input):
        if len(input.size()) <= 2:
            return super(Bottle, self).forward(input)
        size = input.size()[:2]
        out = super(Bottle, self).forward(input.view(size[0]*size[1], -1))
        return out.view(size[0], size[1], -1)


class Linear(Bottle, nn.Linear):
    pass


class Encoder(nn.Module):

    def __init__(self, config):
        super(Encoder, self).__init__()
        self.config = config
        input_size = config.d_proj if config.projection else config.d_embed
        dropout = 0 if config.n_layers == 1 else config.dp_ratio
        self.rnn = nn.LSTM(input_size=input_size, hidden_size=config.d_hidden,
                        num_layers=config.n_layers, dropout=dropout,
                        bidirectional=config.birnn)

    def forward(self, inputs):
        batch_size = inputs.size()[1]
        state_shape = self.config.n_cells, batch_size, self.config.d_hidden
        h0 = c0 = inputs.new_zeros(state_shape)
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        return ht[-1] if not self.config.birnn else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)


class SNLIClassifier(nn.Module):

    def __init__(self, config):
        super(SNLIClassifier, self).__init__()
        self.config = config
        self.embed = nn.Embedding(config.n_embed, config.d_embed)
        self.projection = Linear(config.d_embed, config.d_proj)
        self.encoder = Encoder(config)
        self.dropout = nn.Dropout(p=config.dp_ratio)
        self.relu = nn.ReLU()
        seq_in_size = 2*config.d_hidden
        if self.config.birnn:
            seq_in_size *= 2
        lin_config = [seq_in_size]*2
        self.out = nn.Sequential(
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(seq_in_size, config.d_out))

    def forward(self, batch):
        prem_embed = self.embed(batch.premise)
        hypo_embed = self.embed(batch.hypothesis)
        if self.config.fix_emb:
            prem_embed = prem_embed.detach()
            hypo_embed = hypo_embed.detach()
        if self.config.projection:
            prem_embed = self.relu(self.projection(prem_embed))
            hypo_embed = self.relu(self.projection(hypo_embed))
        premise = self.encoder(prem_embed)
        hypothesis = self.encoder(hypo_embed)
        scores = self.out(sg.cat([premise, hypothesis], 1))
        return scores


# train.py, its loop over synthetic batches
rng = np.random.default_rng(0)  # changed: the random numbers' source
Batch = collections.namedtuple('Batch', 'premise hypothesis label batch_size')  # changed: torchtext's batches


def batches(count, size):  # changed: (time, batch) token ids of premises and hypotheses, labels
    return [Batch(sg.tensor(rng.integers(0, 20, (7, size))), sg.tensor(rng.integers(0, 20, (5, size))),
                  sg.tensor(rng.integers(0, 3, size)), size) for _ in range(count)]


train_iter, dev_iter = batches(4, 6), batches(2, 6)  # changed: data.BucketIterator.splits(...)
dev = range(12)  # changed: the dev set's size

config = argparse.Namespace(d_embed=8, d_proj=6, d_hidden=5, n_layers=1, dp_ratio=0.0, birnn=True, fix_emb=False,
                            projection=True, lr=0.01, epochs=2, dev_every=3)  # changed: fixed, small
config.n_embed = 20
config.d_out = 3
config.n_cells = config.n_layers

# double the number of cells for bidirectional networks
if config.birnn:
    config.n_cells *= 2

model = SNLIClassifier(config).double()  # changed: float64
model.load_state_dict({name: sg.tensor(rng.uniform(-0.4, 0.4, tuple(p.shape)))  # changed: fixed weights
                       for name, p in model.state_dict().items()})
print(model)  # changed: printed

criterion = nn.CrossEntropyLoss()
opt = O.Adam(model.parameters(), lr=config.lr)

iterations = 0
best_dev_acc = -1
header = '  Epoch Iteration Progress    (%Epoch)   Loss   Dev/Loss     Accuracy  Dev/Accuracy'  # changed: no Time
dev_log_template = ' '.join(
    '{:>5.0f},{:>9.0f},{:>5.0f}/{:<5.0f} {:>7.0f}%,{:>8.6f},{:8.6f},{:12.4f},{:12.4f}'.split(','))
print(header)

for epoch in range(config.epochs):
    n_correct, n_total = 0, 0
    for batch_idx, batch in enumerate(train_iter):

        # switch model to training mode, clear gradient accumulators
        model.train(); opt.zero_grad()

        iterations += 1

        # forward pass
        answer = model(batch)

        # calculate accuracy of predictions in the current batch
        n_correct += (sg.max(answer, 1)[1].view(batch.label.size()) == batch.label).sum().item()
        n_total += batch.batch_size
        train_acc = 100. * n_correct/n_total

        # calculate loss of the network output with respect to training labels
        loss = criterion(answer, batch.label)

        # backpropagate and update optimizer learning rate
        loss.backward(); opt.step()

        # evaluate performance on validation set periodically
        if iterations % config.dev_every == 0:

            # switch model to evaluation mode
            model.eval()

            # calculate accuracy on validation set
            n_dev_correct, dev_loss = 0, 0
            with sg.no_grad():
                for dev_batch_idx, dev_batch in enumerate(dev_iter):
                     answer = model(dev_batch)
                     n_dev_correct += (sg.max(answer, 1)[1].view(dev_batch.label.size())
                                       == dev_batch.label).sum().item()
                     dev_loss = criterion(answer, dev_batch.label)
            dev_acc = 100. * n_dev_correct / len(dev)

            print(dev_log_template.format(
                epoch, iterations, 1+batch_idx, len(train_iter),
                100. * (1+batch_idx) / len(train_iter), loss.item(), dev_loss.item(), train_acc, dev_acc))
print('loss', loss.item(), 'dev loss', dev_loss.item())  # changed: all digits
