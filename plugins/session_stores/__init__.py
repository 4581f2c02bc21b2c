"""Built-in session store backends beyond the kernel's SQLite default."""
