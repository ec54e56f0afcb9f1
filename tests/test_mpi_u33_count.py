"""`torchdoctor mpi -n N` out of range says what is wrong with N: at least 1, at most the hosts listed. Before,
`-n 0` and `-n -3` read "the sanity run starts one process per host and hosts.txt lists 1 host(s)", which
does not say what to give."""


def test_a_count_below_one_or_above_the_hosts_says_which_bound(cli_here, tmp_path):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("localhost slots=1\n")
    for count, words in (
        ("0", "-n 0: must be at least 1"),
        ("-3", "-n -3: must be at least 1"),
        ("2", f"-n 2: more than the 1 host(s) {hosts} lists"),
    ):
        result = cli_here("mpi", "--hostfile", str(hosts), "-n", count)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and words in lines[0], (count, lines)
