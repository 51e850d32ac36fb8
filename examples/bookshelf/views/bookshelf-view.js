// <book-shelf>: the bookshelf's view, a `local` ES module. Search the catalogue (searchBooks, an
// http handler), pick a book to read its notes (listNotes, an MCP tool) and add one (addNote).
const css = `
  book-shelf { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; }
  @media (max-width: 560px) { book-shelf { grid-template-columns: 1fr; } }
  book-shelf input, book-shelf textarea { width: 100%; box-sizing: border-box; font: inherit; color: inherit; padding: 7px 10px;
    border: 1px solid var(--hearth-border, #ccc); border-radius: 6px; background: var(--hearth-bg, transparent); }
  book-shelf ul { list-style: none; margin: 10px 0 0; padding: 0; display: grid; gap: 6px; }
  book-shelf .book { width: 100%; text-align: left; font: inherit; color: inherit; cursor: pointer; padding: 8px 10px;
    border: 1px solid var(--hearth-border, #ddd); border-radius: 8px; background: var(--hearth-surface, transparent); }
  book-shelf .book[aria-current=true] { border-color: var(--hearth-accent, #c2410c); }
  book-shelf .book small { display: block; color: var(--hearth-muted, #666); }
  book-shelf h3 { margin: 0 0 8px; font-size: 15px; }
  book-shelf .note { border-left: 3px solid var(--hearth-accent, #c2410c); padding: 4px 10px; }
  book-shelf .note small { display: block; color: var(--hearth-muted, #666); font-size: 12px; }
  book-shelf .compose { display: grid; gap: 6px; margin-top: 10px; }
  book-shelf .compose button { justify-self: start; font: inherit; font-weight: 600; padding: 6px 14px; border: 0; border-radius: 6px;
    cursor: pointer; background: var(--hearth-accent, #c2410c); color: var(--hearth-accent-fg, #fff); }
  book-shelf .muted { color: var(--hearth-muted, #666); }
  book-shelf .error { color: var(--hearth-danger, #b42318); overflow-wrap: anywhere; }
`;

function h(tag, props = {}, ...kids) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
}

class BookShelf extends HTMLElement {
  connectedCallback() {
    this.books = [];
    this.notes = [];
    this.selected = null;
    this.build();
  }

  setLAVSClient(client) {
    this.client = client;
    return this.search('');
  }

  onAgentAction(action) {
    if (action.endpoint === 'addBook') return this.search(this.q.value);
    if (action.endpoint === 'addNote' && this.selected) return this.loadNotes();
    return undefined;
  }

  async search(q) {
    try {
      this.books = await this.client.call('searchBooks', q ? { q, limit: 20 } : { limit: 20 });
      this.booksError = '';
    } catch (e) {
      this.books = [];
      this.booksError = `The catalogue did not answer (${e.message}). Start it with python3 catalog/server.py.`;
    }
    this.renderBooks();
  }

  async loadNotes() {
    try {
      this.notes = (await this.client.call('listNotes', { bookId: this.selected.id })).notes;
      this.notesError = '';
    } catch (e) {
      this.notes = [];
      this.notesError = e.message;
    }
    this.renderNotes();
  }

  build() {
    this.textContent = '';
    this.q = h('input', { type: 'search', name: 'q', placeholder: 'Search title or author' });
    this.q.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.search(this.q.value.trim()), 200);
    });
    this.bookList = h('ul');
    this.booksStatus = h('p', { className: 'error' });
    this.notesBox = h('div');
    this.append(h('style', { textContent: css }), h('section', {}, this.q, this.bookList, this.booksStatus), this.notesBox);
    this.renderNotes();
  }

  renderBooks() {
    this.bookList.textContent = '';
    for (const book of this.books) {
      const b = h('button', { type: 'button', className: 'book' }, book.title, h('small', { textContent: `${book.author}${book.year ? `, ${book.year}` : ''}` }));
      b.setAttribute('aria-current', String(this.selected?.id === book.id));
      b.addEventListener('click', () => {
        this.selected = book;
        this.renderBooks();
        this.loadNotes();
      });
      this.bookList.append(h('li', {}, b));
    }
    this.booksStatus.textContent = this.booksError || (this.books.length ? '' : 'No books found.');
  }

  renderNotes() {
    this.notesBox.textContent = '';
    if (!this.selected) {
      this.notesBox.append(h('p', { className: 'muted', textContent: 'Pick a book to see its reading notes.' }));
      return;
    }
    const list = h('ul');
    for (const n of this.notes) list.append(h('li', { className: 'note' }, n.text, h('small', { textContent: new Date(n.at).toLocaleString() })));
    if (!this.notes.length) list.append(h('li', { className: 'muted', textContent: 'No notes yet.' }));
    // A click (or Ctrl+Enter) handled here rather than a <form>: the view also runs in a frame
    // sandboxed with allow-scripts only (an MCP host's).
    const text = h('textarea', { name: 'note', rows: 2, placeholder: 'A note about this book (Ctrl+Enter adds it)' });
    const add = h('button', { type: 'button', className: 'add-note', textContent: 'Add note' });
    const compose = h('div', { className: 'compose' }, text, add);
    const submit = async () => {
      if (!text.value.trim()) return;
      try {
        await this.client.call('addNote', { bookId: this.selected.id, text: text.value.trim() });
      } catch (err) {
        this.notesError = err.message;
      }
      await this.loadNotes();
    };
    add.addEventListener('click', submit);
    text.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.isComposing) {
        e.preventDefault();
        submit();
      }
    });
    this.notesBox.append(h('h3', { textContent: this.selected.title }), list, compose, h('p', { className: 'error', textContent: this.notesError || '' }));
  }
}

customElements.define('book-shelf', BookShelf);
