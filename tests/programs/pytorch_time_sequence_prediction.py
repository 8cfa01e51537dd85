# pytorch/examples time_sequence_prediction (generate_sine_wave.py and train.py): two stacked nn.LSTMCell and a
# Linear learn sine waves in float64 with optim.LBFGS (a closure evaluated up to 20 times a step), then predict
# the test waves' future under no_grad. `import torch` renamed. Changed (marked): 6 waves of 11 points (100 of
# 1000), 2 steps (15), a future of 10 points (1000), the prediction's numbers printed instead of plotted, no
# argparse; the weights come from NumPy's generator (symgrad's random numbers are not PyTorch's).
import numpy as np
import symgrad as sg
import symgrad.nn as nn
import symgrad.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future = 0):
        outputs = []
        h_t = sg.zeros(input.size(0), 51, dtype=sg.double)
        c_t = sg.zeros(input.size(0), 51, dtype=sg.double)
        h_t2 = sg.zeros(input.size(0), 51, dtype=sg.double)
        c_t2 = sg.zeros(input.size(0), 51, dtype=sg.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):# if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = sg.cat(outputs, dim=1)
        return outputs


def generate_sine_wave():  # changed: generate_sine_wave.py, its data returned instead of saved
    np.random.seed(2)

    T = 20
    L = 11  # changed: 1000
    N = 6  # changed: 100

    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    return data


def fixed(module):  # changed: fixed weights instead of PyTorch's random ones
    rng = np.random.default_rng(0)
    module.load_state_dict({name: sg.tensor(rng.uniform(-0.14, 0.14, tuple(p.shape)), dtype=sg.double)
                            for name, p in module.state_dict().items()})
    return module


if __name__ == '__main__':
    steps = 2  # changed: argparse's --steps, 15
    # set random seed to 0
    np.random.seed(0)
    sg.manual_seed(0)
    # load data and make training set
    data = generate_sine_wave()  # changed: torch.load('traindata.pt')
    input = sg.from_numpy(data[3:, :-1])
    target = sg.from_numpy(data[3:, 1:])
    test_input = sg.from_numpy(data[:3, :-1])
    test_target = sg.from_numpy(data[:3, 1:])
    # build the model
    seq = Sequence()
    seq.double()
    fixed(seq)  # changed: fixed weights
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    #begin to train
    for i in range(steps):
        print('STEP: ', i)
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with sg.no_grad():
            future = 10  # changed: 1000
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
        print('predicted future:', np.round(y[:, -future::3], 8))  # changed: printed, not plotted
