import pytest
from fastapi.testclient import TestClient

from proofgym.taskapp import create_app
from proofgym.traces import TraceStore

API_KEY = "test-key"


@pytest.fixture
def traces_path(tmp_path):
    return tmp_path / "traces.db"


@pytest.fixture
def make_client(traces_path):
    """``make_client(env_name, **create_app_kwargs)``: a TestClient (lifespan running) sending the API key."""
    clients = []

    def make(env_name="grant_eligibility", *, headers=None, **kwargs):
        kwargs.setdefault("api_key", API_KEY)
        kwargs.setdefault("store", traces_path)
        client = TestClient(create_app(env_name, **kwargs), headers={"X-API-Key": API_KEY} if headers is None
                            else headers)
        clients.append(client.__enter__())
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def stored(traces_path):
    """``stored()``: the trace store the apps wrote to, opened read-side (closed after the test)."""
    stores = []

    def open_store():
        store = TraceStore(traces_path, create=False)
        stores.append(store)
        return store

    yield open_store
    for store in stores:
        store.close()
