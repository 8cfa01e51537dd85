# pytorch/examples word_language_model (main.py, model.py, data.py): a word-level language model (Embedding, a
# two-layer nn.LSTM, a Linear decoder, log_softmax and NLLLoss; the Transformer variant: nn.Transformer's encoder
# with a positional encoding and a causal mask) trained by truncated backpropagation through time with
# clip_grad_norm_ and hand-written p.data.add_ steps, the learning rate divided by 4 when the validation loss does
# not improve, the best model reloaded and tested. `import torch` renamed. Changed (marked): a small corpus in the
# program instead of wikitext-2, small sizes (emsize = nhid 16, batches of 4, bptt 6, 2 epochs), float64, dropout
# 0 (its masks are random), both model types in one run (args.model in a loop), the weights from NumPy's generator
# (symgrad's random numbers are not PyTorch's), the best model kept as its saved state_dict (sg.save takes tensors
# and their containers, not modules), no timings printed, args fixed instead of argparse's, no ONNX export.
import argparse
import io
import math
import numpy as np  # changed: the random numbers' source
import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F

TEXT = {  # changed: the corpus
    "train": """the quick brown fox jumps over the lazy dog
the lazy dog sleeps in the sun and the fox runs
a brown dog and a quick fox play in the sun
the sun is warm and the dog is lazy
the fox jumps and the dog sleeps
""".splitlines(),
    "valid": ["the quick dog runs in the sun", "a lazy fox sleeps and the dog jumps"],
    "test": ["the brown fox is quick and the dog is lazy", "the sun is warm"],
}


class Dictionary(object):  # data.py
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):  # data.py
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(TEXT['train'])  # changed: lines, not files
        self.valid = self.tokenize(TEXT['valid'])
        self.test = self.tokenize(TEXT['test'])

    def tokenize(self, lines):  # changed: lines, not a file
        """Tokenizes a text file."""
        # Add words to the dictionary
        for line in lines:
            words = line.split() + ['<eos>']
            for word in words:
                self.dictionary.add_word(word)

        # Tokenize file content
        idss = []
        for line in lines:
            words = line.split() + ['<eos>']
            ids = []
            for word in words:
                ids.append(self.dictionary.word2idx[word])
            idss.append(sg.tensor(ids).type(sg.int64))
        ids = sg.cat(idss)

        return ids


class RNNModel(nn.Module):  # model.py
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            except KeyError as e:
                raise ValueError( """An invalid option for `--model` was supplied,
                                 options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']""") from e
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight

        self.init_weights()

        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):  # model.py
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)

        pe = sg.zeros(max_len, d_model)
        position = sg.arange(0, max_len, dtype=sg.float).unsqueeze(1)
        div_term = sg.exp(sg.arange(0, d_model, 2, dtype=sg.long).float() * (-math.log(10000.0) / d_model))  # changed
        # (dtype=sg.long: sg.arange(0, d, 2) is NumPy's call, an array; docs/eager.md, 'Factories')
        pe[:, 0::2] = sg.sin(position * div_term)
        pe[:, 1::2] = sg.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):  # model.py
    """Container module with an encoder, a recurrent or transformer module, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers, dropout=dropout)  # changed: dropout (0)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout, max_len=64)  # changed: max_len 5000

        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return sg.log(sg.tril(sg.ones(sz,sz, dtype=sg.double)))  # changed: float64

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None

        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def fixed(model, rng):  # changed: fixed weights instead of PyTorch's random ones
    state = model.state_dict()
    model.load_state_dict({name: sg.tensor(rng.uniform(-0.2, 0.2, tuple(p.shape))) if p.is_floating_point() else p
                           for name, p in state.items()})
    return model


args = argparse.Namespace(data='./data/wikitext-2', model='LSTM', emsize=16, nhid=16, nlayers=2, lr=20, clip=0.25,
                          epochs=2, batch_size=4, bptt=6, dropout=0.0, tied=False, seed=1111, log_interval=1,
                          save='model.pt', onnx_export='', nhead=2, dry_run=False, accel=False,
                          use_optimizer=False)  # changed: fixed, small

sg.manual_seed(args.seed)

if args.accel and sg.accelerator.is_available():
    device = sg.accelerator.current_accelerator()

else:
    device = sg.device("cpu")

print("Using device:", device)


corpus = Corpus(args.data)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)

eval_batch_size = 2  # changed: 10
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""

    if isinstance(h, sg.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    ntokens = len(corpus.dictionary)
    if args.model != 'Transformer':
        hidden = model.init_hidden(eval_batch_size)
    with sg.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            if args.model == 'Transformer':
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train():
    model.train()
    total_loss = 0.
    ntokens = len(corpus.dictionary)
    if args.model != 'Transformer':
        hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        if args.use_optimizer:
            optimizer.zero_grad()
        else:
            model.zero_grad()
        if args.model == 'Transformer':
            output = model(data)
            output = output.view(-1, ntokens)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()

        sg.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        if args.use_optimizer:
            optimizer.step()
        else:
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)

        total_loss += loss.item()

        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | '  # changed: no timings
                    'loss {:5.2f} | ppl {:8.2f}'.format(
                epoch, batch, len(train_data) // args.bptt, lr,
                cur_loss, math.exp(cur_loss)))
            total_loss = 0
        if args.dry_run:
            break


for args.model in ('LSTM', 'Transformer'):  # changed: both model types
    rng = np.random.default_rng(0)  # changed: the random numbers' source
    ntokens = len(corpus.dictionary)
    if args.model == 'Transformer':
        model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout).to(device)
    else:
        model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied).to(device)
    model = fixed(model.double(), rng)  # changed: float64, fixed weights

    criterion = nn.NLLLoss()
    if args.use_optimizer:
        optimizer = sg.optim.AdamW(model.parameters(), lr=args.lr)

    lr = args.lr
    best_val_loss = None

    try:
        for epoch in range(1, args.epochs+1):
            train()
            val_loss = evaluate(val_data)
            print('-' * 89)
            print('| end of epoch {:3d} | valid loss {:5.2f} | '  # changed: no timings
                    'valid ppl {:8.2f}'.format(epoch, val_loss, math.exp(val_loss)))
            print('-' * 89)
            if not best_val_loss or val_loss < best_val_loss:
                f = io.BytesIO()  # changed: in memory, not args.save
                sg.save(model.state_dict(), f)  # changed: the state_dict, not the model
                best_val_loss = val_loss
            else:
                lr /= 4.0
    except KeyboardInterrupt:
        print('-' * 89)
        print('Exiting from training early')

    f.seek(0)  # changed: in memory, not args.save
    model.load_state_dict(sg.load(f))  # changed: the state_dict, not the model
    if args.model in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
        model.rnn.flatten_parameters()

    test_loss = evaluate(test_data)
    print('=' * 89)
    print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(
        test_loss, math.exp(test_loss)))
    print('=' * 89)
    print('test loss', test_loss, 'best validation loss', best_val_loss)  # changed: all digits
