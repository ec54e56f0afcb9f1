"""The hundred-and-first sample's train log, read as its thread established, and a near-miss that must not read as
it (tests/fixtures/corpus/SAMPLING.md, files 4867-4916). The sample's one train log was read right before this
session, so it added no knowledge; these tests keep that reading."""

from __future__ import annotations

from explaining import explained, read


# LlamaFactory#162: the owner hiyouga, another --master_port (MASTER_PORT for llamafactory-cli); the store's
# message as the filer pasted it, wrapped in the middle of its second address
def test_the_train_log_names_the_taken_port_and_another_one():
    found = read("4869.txt", "rendezvous_or_port")
    assert "29500" in found.summary, found.summary
    assert "--master_port" in found.fix and "MASTER_PORT" in found.fix, found.fix


# a web server of the same job (uvicorn, gradio) failing to bind its own port: the same errno, no rendezvous
def test_a_web_server_that_cannot_bind_is_not_certain_to_be_the_rendezvous_port():
    found = explained(
        "INFO:     Started server process [4127]\n"
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 7860): address already in use\n"
    )
    assert found.details.get("confidence") != "certain", (found.id, found.summary)
