# PyTorch's "Deep Learning for NLP with Pytorch", "Word Embeddings: Encoding Lexical Semantics"
# (beginner_source/nlp/word_embeddings_tutorial.py), `import torch` renamed: an nn.Embedding lookup, then the N-gram
# language model (Embedding, two Linear layers, relu, log_softmax, NLLLoss, SGD) on Shakespeare's sonnet 2, the
# losses printed. Changed (marked): the weights come from NumPy's generator (symgrad's random numbers are not
# PyTorch's), and 5 epochs instead of 10 (test time).
import numpy as np
import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim

sg.manual_seed(1)
rng = np.random.default_rng(14)  # changed: the random numbers' source


def fixed(module):  # changed: fixed weights instead of PyTorch's random ones
    module.load_state_dict({name: sg.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)), dtype=sg.float)
                            for name, p in module.state_dict().items()})
    return module


word_to_ix = {"hello": 0, "world": 1}
embeds = fixed(nn.Embedding(2, 5))  # 2 words in vocab, 5 dimensional embeddings  # changed: fixed()
lookup_tensor = sg.tensor([word_to_ix["hello"]], dtype=sg.long)
hello_embed = embeds(lookup_tensor)
print(hello_embed)

CONTEXT_SIZE = 2
EMBEDDING_DIM = 10
# We will use Shakespeare Sonnet 2
test_sentence = """When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held:
Then being asked, where all thy beauty lies,
Where all the treasure of thy lusty days;
To say, within thine own deep sunken eyes,
Were an all-eating shame, and thriftless praise.
How much more praise deserv'd thy beauty's use,
If thou couldst answer 'This fair child of mine
Shall sum my count, and make my old excuse,'
Proving his beauty by succession thine!
This were to be new made when thou art old,
And see thy blood warm when thou feel'st it cold.""".split()
# we should tokenize the input, but we will ignore that for now
# build a list of tuples.
# Each tuple is ([ word_i-CONTEXT_SIZE, ..., word_i-1 ], target word)
ngrams = [
    (
        [test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)],
        test_sentence[i]
    )
    for i in range(CONTEXT_SIZE, len(test_sentence))
]
# Print the first 3, just so you can see what they look like.
print(ngrams[:3])

vocab = sorted(set(test_sentence))  # changed: sorted (a set's order changes between processes)
word_to_ix = {word: i for i, word in enumerate(vocab)}


class NGramLanguageModeler(nn.Module):

    def __init__(self, vocab_size, embedding_dim, context_size):
        super(NGramLanguageModeler, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 128)
        self.linear2 = nn.Linear(128, vocab_size)

    def forward(self, inputs):
        embeds = self.embeddings(inputs).view((1, -1))
        out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        log_probs = F.log_softmax(out, dim=1)
        return log_probs


losses = []
loss_function = nn.NLLLoss()
model = fixed(NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE))  # changed: fixed()
optimizer = optim.SGD(model.parameters(), lr=0.001)

for epoch in range(5):  # changed: 10
    total_loss = 0
    for context, target in ngrams:

        # Step 1. Prepare the inputs to be passed to the model (i.e, turn the words
        # into integer indices and wrap them in tensors)
        context_idxs = sg.tensor([word_to_ix[w] for w in context], dtype=sg.long)

        # Step 2. Recall that torch *accumulates* gradients. Before passing in a
        # new instance, you need to zero out the gradients from the old
        # instance
        model.zero_grad()

        # Step 3. Run the forward pass, getting log probabilities over next
        # words
        log_probs = model(context_idxs)

        # Step 4. Compute your loss function. (Again, Torch wants the target
        # word wrapped in a tensor)
        loss = loss_function(log_probs, sg.tensor([word_to_ix[target]], dtype=sg.long))

        # Step 5. Do the backward pass and update the gradient
        loss.backward()
        optimizer.step()

        # Get the Python number from a 1-element Tensor by calling tensor.item()
        total_loss += loss.item()
    losses.append(total_loss)
print(losses)  # The loss decreased every iteration over the training data!

# To get the embedding of a particular word, e.g. "beauty"
print(model.embeddings.weight[word_to_ix["beauty"]])
