"""The tests of the exercises, one file per exercise: `test_<id>.py`.

`python -m minibert.exercises start NN` copies the lesson's files into the workspace's tests/ folder, where
they run against the workspace's copy of minibert. They are ordinary pytest files: each test's docstring
says what it checks, and none of them copies its expected values from the code under test.
"""
