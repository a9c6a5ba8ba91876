j nowhere
