# pytorch/examples language_translation (src/model.py, src/data.py and main.py): a Transformer translator (two
# nn.Embedding tables, a PositionalEncoding buffer built by strided writes pos_embedding[:, 0::2] = sin(...), an
# nn.Transformer called positionally with a float -inf causal tgt_mask, a boolean src_mask and boolean padding
# masks from (src == pad_idx).transpose(0, 1), a Linear head, xavier_uniform_ of every matrix), trained with
# CrossEntropyLoss(ignore_index=pad) and Adam(betas=(0.9, 0.98), eps=1e-9) over a DataLoader of sentence pairs whose
# collate_fn tokenizes, numericalizes and pad_sequence's them (torch.cat of tensors of lists), validated in eval
# mode, and run by greedy_decode (torch.ones(1, 1).fill_(bos).type(torch.long), transformer.encoder and .decoder
# called on their own with a boolean mask from .type(torch.bool), torch.max, type_as(src.data).fill_). `import
# torch` renamed. Changed (marked): torchtext's Multi30k, spaCy's tokenizers and build_vocab_from_iterator replaced
# by a few sentence pairs inline, str.split and a small vocabulary class of the same interface; tqdm, logging,
# argparse and timing left out (options fixed, losses printed); float64 (the model, the position table);
# NumPy's draws for xavier_uniform_ and for the other weights that PyTorch draws (symgrad's random numbers are not
# PyTorch's); dropout 0; small sizes (embed 16, 2 heads, 1 + 1 layers, feed-forward 32, maxlen 64), lr 3e-3, 3 epochs;
# the checkpoints in a temporary folder; inference on given sentences, not input().
import math
import os  # changed: the checkpoints in a temporary folder
import tempfile  # changed

import numpy as np  # changed: the random numbers' source
import symgrad as torch
from symgrad import nn
from symgrad.nn.utils.rnn import pad_sequence
from symgrad.utils.data import DataLoader

rng = np.random.default_rng(0)  # changed: the random numbers' source
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


# src/model.py
class PositionalEncoding(nn.Module):
    def __init__(
        self,
        emb_size,
        dropout,
        maxlen=64  # changed: 5000
    ):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(- torch.arange(0, emb_size, 2)* math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size), dtype=torch.double)  # changed: float64
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)

        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding)

    def forward(self, token_embedding):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

class Translator(nn.Module):
    def __init__(
            self,
            num_encoder_layers,
            num_decoder_layers,
            embed_size,
            num_heads,
            src_vocab_size,
            tgt_vocab_size,
            dim_feedforward,
            dropout
        ):
        super(Translator, self).__init__()

        # Output of embedding must be equal (embed_size)
        self.src_embedding = nn.Embedding(src_vocab_size, embed_size)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_size)

        self.pos_enc = PositionalEncoding(embed_size, dropout)

        self.transformer = nn.Transformer(
            d_model=embed_size,
            nhead=num_heads,
            num_encoder_layers=num_encoder_layers,
            num_decoder_layers=num_decoder_layers,
            dim_feedforward=dim_feedforward,
            dropout=dropout
        )

        self.ff = nn.Linear(embed_size, tgt_vocab_size)

        self._init_weights()

    def _init_weights(self):
        for name, p in self.named_parameters():  # changed: names, for the weights PyTorch draws
            if p.dim() > 1:
                xavier_uniform_(p)  # changed: NumPy's draws for nn.init.xavier_uniform_
            elif "norm" not in name:  # changed: the biases NumPy's too
                p.data = torch.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)))  # changed

    def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, memory_key_padding_mask):

        src_emb = self.pos_enc(self.src_embedding(src))
        tgt_emb = self.pos_enc(self.tgt_embedding(trg))

        outs = self.transformer(
            src_emb,
            tgt_emb,
            src_mask,
            tgt_mask,
            None,
            src_padding_mask,
            tgt_padding_mask,
            memory_key_padding_mask
        )

        return self.ff(outs)

    def encode(self, src, src_mask):

        embed = self.src_embedding(src)

        pos_enc = self.pos_enc(embed)

        return self.transformer.encoder(pos_enc, src_mask)

    def decode(self, tgt, memory, tgt_mask):
        
        embed = self.tgt_embedding(tgt)

        pos_enc = self.pos_enc(embed)

        return self.transformer.decoder(pos_enc, memory, tgt_mask)


def xavier_uniform_(p):  # changed: nn.init.xavier_uniform_'s distribution, NumPy's draws
    bound = math.sqrt(6 / (p.shape[0] + p.shape[1]))
    p.data = torch.tensor(rng.uniform(-bound, bound, tuple(p.shape)))


# src/data.py
PAIRS = [("ein mann schläft .", "a man sleeps ."), ("eine frau liest .", "a woman reads ."),  # changed: Multi30k
         ("zwei hunde spielen im schnee .", "two dogs play in the snow ."), ("ein kind lacht .", "a child laughs ."),
         ("ein mann liest ein buch .", "a man reads a book ."), ("eine frau schläft .", "a woman sleeps ."),
         ("zwei kinder spielen .", "two children play ."), ("ein hund läuft im park .", "a dog runs in the park ."),
         ("eine frau lacht .", "a woman laughs ."), ("ein mann läuft .", "a man runs ."),
         ("zwei männer lesen .", "two men read ."), ("ein kind spielt im schnee .", "a child plays in the snow .")]


class Vocab:  # changed: torchtext's build_vocab_from_iterator's vocabulary: specials first, then by frequency
    def __init__(self, token_lists, min_freq, specials, special_first):
        counts = {}
        for tokens in token_lists:
            for token in tokens:
                counts[token] = counts.get(token, 0) + 1
        ordered = sorted((t for t in counts if counts[t] >= min_freq), key=lambda t: (-counts[t], t))
        self.itos = list(specials) + ordered
        self.stoi = {token: index for index, token in enumerate(self.itos)}
        self.default = None

    def set_default_index(self, index):
        self.default = index

    def __len__(self):
        return len(self.itos)

    def __call__(self, tokens):
        return [self.stoi.get(token, self.default) for token in tokens]

    def lookup_tokens(self, indices):
        return [self.itos[int(index)] for index in indices]


# Turns an iterable into a generator
def _yield_tokens(iterable_data, tokenizer, src):

    # Iterable data stores the samples as (src, tgt) so this will help us select just one language or the other
    index = 0 if src else 1

    for data in iterable_data:
        yield tokenizer(data[index])

# Get data, tokenizer, text transform, vocab objs, etc. Everything we
# need to start training the model
def get_data(opts):

    # Define a token "unkown", "padding", "beginning of sentence", and "end of sentence"
    special_symbols = {
        "<unk>":0,
        "<pad>":1,
        "<bos>":2,
        "<eos>":3
    }

    # Get training examples from torchtext (the multi30k dataset)
    train_iterator = PAIRS[:8]  # changed: Multi30k(split="train", language_pair=(src_lang, tgt_lang))
    valid_iterator = PAIRS[8:]  # changed: Multi30k(split="valid", language_pair=(src_lang, tgt_lang))

    # Grab a tokenizer for these languages
    src_tokenizer = str.split  # changed: get_tokenizer("spacy", src_lang)
    tgt_tokenizer = str.split  # changed: get_tokenizer("spacy", tgt_lang)

    # Build a vocabulary object for these languages
    src_vocab = Vocab(  # changed: build_vocab_from_iterator(
        _yield_tokens(train_iterator, src_tokenizer, True),
        min_freq=1,
        specials=list(special_symbols.keys()),
        special_first=True
    )

    tgt_vocab = Vocab(  # changed: build_vocab_from_iterator(
        _yield_tokens(train_iterator, tgt_tokenizer, False),
        min_freq=1,
        specials=list(special_symbols.keys()),
        special_first=True
    )

    src_vocab.set_default_index(special_symbols["<unk>"])
    tgt_vocab.set_default_index(special_symbols["<unk>"])

    # Helper function to sequentially apply transformations
    def _seq_transform(*transforms):
        def func(txt_input):
            for transform in transforms:
                txt_input = transform(txt_input)
            return txt_input
        return func

    # Function to add BOS/EOS and create tensor for input sequence indices
    def _tensor_transform(token_ids):
        return torch.cat(
            (torch.tensor([special_symbols["<bos>"]]),
             torch.tensor(token_ids),
             torch.tensor([special_symbols["<eos>"]]))
        )

    src_lang_transform = _seq_transform(src_tokenizer, src_vocab, _tensor_transform)
    tgt_lang_transform = _seq_transform(tgt_tokenizer, tgt_vocab, _tensor_transform)

    # Now we want to convert the torchtext data pipeline to a dataloader. We
    # will need to collate batches
    def _collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(src_lang_transform(src_sample.rstrip("\n")))
            tgt_batch.append(tgt_lang_transform(tgt_sample.rstrip("\n")))

        src_batch = pad_sequence(src_batch, padding_value=special_symbols["<pad>"])
        tgt_batch = pad_sequence(tgt_batch, padding_value=special_symbols["<pad>"])
        return src_batch, tgt_batch

    # Create the dataloader
    train_dataloader = DataLoader(train_iterator, batch_size=opts.batch, collate_fn=_collate_fn)
    valid_dataloader = DataLoader(valid_iterator, batch_size=opts.batch, collate_fn=_collate_fn)

    return train_dataloader, valid_dataloader, src_vocab, tgt_vocab, src_lang_transform, tgt_lang_transform, special_symbols

def generate_square_subsequent_mask(size, device):
    mask = (torch.triu(torch.ones((size, size), device=device)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask

# Create masks for input into model
def create_mask(src, tgt, pad_idx, device):

    # Get sequence length
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]

    # Generate the mask
    tgt_mask = generate_square_subsequent_mask(tgt_seq_len, device)
    src_mask = torch.zeros((src_seq_len, src_seq_len),device=device).type(torch.bool)

    # Overlay the mask over the original input
    src_padding_mask = (src == pad_idx).transpose(0, 1)
    tgt_padding_mask = (tgt == pad_idx).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


# main.py
def greedy_decode(model, src, src_mask, max_len, start_symbol, end_symbol):

    src = src.to(DEVICE)
    src_mask = src_mask.to(DEVICE)

    memory = model.encode(src, src_mask)

    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)

    for _ in range(max_len-1):

        memory = memory.to(DEVICE)
        tgt_mask = (generate_square_subsequent_mask(ys.size(0), DEVICE).type(torch.bool)).to(DEVICE)
        out = model.decode(ys, memory, tgt_mask)

        out = out.transpose(0, 1)

        prob = model.ff(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()

        ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == end_symbol:
            break

    return ys

def inference(opts, sentences):  # changed: the sentences given, not input()

    _, _, src_vocab, tgt_vocab, src_transform, _, special_symbols = get_data(opts)

    src_vocab_size = len(src_vocab)
    tgt_vocab_size = len(tgt_vocab)

    model = Translator(
        num_encoder_layers=opts.enc_layers,
        num_decoder_layers=opts.dec_layers,
        embed_size=opts.embed_size,
        num_heads=opts.attn_heads,
        src_vocab_size=src_vocab_size,
        tgt_vocab_size=tgt_vocab_size,
        dim_feedforward=opts.dim_feedforward,
        dropout=opts.dropout
    ).to(DEVICE).double()  # changed: float64

    model.load_state_dict(torch.load(opts.model_path))

    model.eval()

    for sentence in sentences:  # changed: while True over input()
        print("> ", end="")

        src = src_transform(sentence).view(-1, 1)
        num_tokens = src.shape[0]

        src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)

        tgt_tokens = greedy_decode(
            model, src, src_mask, max_len=num_tokens+5, start_symbol=special_symbols["<bos>"], end_symbol=special_symbols["<eos>"]
        ).flatten()

        output_as_list = list(tgt_tokens.cpu().numpy())

        output_list_words = tgt_vocab.lookup_tokens(output_as_list)

        translation = " ".join(output_list_words).replace("<bos>", "").replace("<eos>", "")

        print(translation)

def train(model, train_dl, loss_fn, optim, special_symbols, opts):

    losses = 0

    model.train()
    for src, tgt in train_dl:  # changed: tqdm(train_dl, ascii=True)

        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)

        tgt_input = tgt[:-1, :]

        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input, special_symbols["<pad>"], DEVICE)

        logits = model(src, tgt_input, src_mask, tgt_mask,src_padding_mask, tgt_padding_mask, src_padding_mask)

        optim.zero_grad()

        tgt_out = tgt[1:, :]

        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()

        optim.step()

        losses += loss.item()

        if opts.dry_run:
            break

    return losses / len(list(train_dl))

def validate(model, valid_dl, loss_fn, special_symbols):
    
    losses = 0

    model.eval()

    for src, tgt in valid_dl:  # changed: tqdm(valid_dl)

        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)

        tgt_input = tgt[:-1, :]

        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input, special_symbols["<pad>"], DEVICE)

        logits = model(src, tgt_input, src_mask, tgt_mask,src_padding_mask, tgt_padding_mask, src_padding_mask)

        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        losses += loss.item()

    return losses / len(list(valid_dl))

def main(opts):

    train_dl, valid_dl, src_vocab, tgt_vocab, _, _, special_symbols = get_data(opts)

    src_vocab_size = len(src_vocab)
    tgt_vocab_size = len(tgt_vocab)

    print(f"{opts.src} vocab size: {src_vocab_size}")  # changed: print for logging.info
    print(f"{opts.tgt} vocab size: {tgt_vocab_size}")  # changed

    model = Translator(
        num_encoder_layers=opts.enc_layers,
        num_decoder_layers=opts.dec_layers,
        embed_size=opts.embed_size,
        num_heads=opts.attn_heads,
        src_vocab_size=src_vocab_size,
        tgt_vocab_size=tgt_vocab_size,
        dim_feedforward=opts.dim_feedforward,
        dropout=opts.dropout
    ).to(DEVICE).double()  # changed: float64

    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=special_symbols["<pad>"])

    optim = torch.optim.Adam(model.parameters(), lr=opts.lr, betas=(0.9, 0.98), eps=1e-9)

    best_val_loss = 1e6
    
    for idx, epoch in enumerate(range(1, opts.epochs+1)):

        train_loss = train(model, train_dl, loss_fn, optim, special_symbols, opts)
        val_loss   = validate(model, valid_dl, loss_fn, special_symbols)

        if val_loss < best_val_loss:
            best_val_loss = val_loss
            print("New best model, saving...")  # changed: print for logging.info
            torch.save(model.state_dict(), opts.logging_dir + "best.pt")

        torch.save(model.state_dict(), opts.logging_dir + "last.pt")

        print(f"Epoch: {epoch}\n\tTrain loss: {train_loss:.6f}\n\tVal loss: {val_loss:.6f}")  # changed: 6 digits


if __name__ == "__main__":
    folder = tempfile.TemporaryDirectory()  # changed
    class Opts:  # changed: the options fixed, not parsed
        src, tgt, epochs, lr, batch, attn_heads, enc_layers, dec_layers = "de", "en", 3, 3e-3, 4, 2, 1, 1
        embed_size, dim_feedforward, dropout, dry_run = 16, 32, 0.0, False
        logging_dir = folder.name + os.sep
        model_path = logging_dir + "last.pt"
    args = Opts()
    main(args)
    inference(args, ["ein mann schläft .", "zwei hunde spielen .", "eine frau läuft im schnee ."])  # changed
    folder.cleanup()  # changed
